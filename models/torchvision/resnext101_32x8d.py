# labels: name::resnext101_32x8d author::torchvision task::computer_vision family::resnext kind::classification
# ruff: noqa: E501
"""
`torchvision.models.resnext101_32x8d` from torchvision, random weights (weights=None),
88,791,336 parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.resnext101_32x8d.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python resnext101_32x8d.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.resnext101_32x8d(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
