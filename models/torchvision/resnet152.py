# labels: name::resnet152 author::torchvision task::computer_vision family::resnet kind::classification
# ruff: noqa: E501
"""
`torchvision.models.resnet152` from torchvision, random weights (weights=None), 60,192,808
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.resnet152.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python resnet152.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.resnet152(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
