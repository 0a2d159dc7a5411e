# labels: name::densenet169 author::torchvision task::computer_vision family::densenet kind::classification
# ruff: noqa: E501
"""
`torchvision.models.densenet169` from torchvision, random weights (weights=None), 14,149,480
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.densenet169.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python densenet169.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.densenet169(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
