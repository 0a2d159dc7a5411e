# labels: name::convnext_base author::torchvision task::computer_vision family::convnext kind::classification
# ruff: noqa: E501
"""
`torchvision.models.convnext_base` from torchvision, random weights (weights=None), 88,591,464
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.convnext_base.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python convnext_base.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.convnext_base(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
