# labels: name::convnext_small author::torchvision task::computer_vision family::convnext kind::classification
# ruff: noqa: E501
"""
`torchvision.models.convnext_small` from torchvision, random weights (weights=None), 50,223,688
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.convnext_small.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python convnext_small.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.convnext_small(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
