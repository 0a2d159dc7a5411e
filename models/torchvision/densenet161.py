# labels: name::densenet161 author::torchvision task::computer_vision family::densenet kind::classification
# ruff: noqa: E501
"""
`torchvision.models.densenet161` from torchvision, random weights (weights=None), 28,681,000
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.densenet161.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python densenet161.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.densenet161(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
