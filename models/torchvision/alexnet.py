# labels: name::alexnet author::torchvision task::computer_vision family::alexnet kind::classification
# ruff: noqa: E501
"""
`torchvision.models.alexnet` from torchvision, random weights (weights=None), 61,100,840
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.alexnet.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python alexnet.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.alexnet(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
