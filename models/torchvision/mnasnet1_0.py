# labels: name::mnasnet1_0 author::torchvision task::computer_vision family::mnasnet kind::classification
# ruff: noqa: E501
"""
`torchvision.models.mnasnet1_0` from torchvision, random weights (weights=None), 4,383,312
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.mnasnet1_0.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mnasnet1_0.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.mnasnet1_0(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
