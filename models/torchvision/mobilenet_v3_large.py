# labels: name::mobilenet_v3_large author::torchvision task::computer_vision family::mobilenet_v3 kind::classification
# ruff: noqa: E501
"""
`torchvision.models.mobilenet_v3_large` from torchvision, random weights (weights=None),
5,483,032 parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.mobilenet_v3_large.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mobilenet_v3_large.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.mobilenet_v3_large(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
