# labels: name::regnet_x_800mf author::torchvision task::computer_vision family::regnet_x kind::classification
# ruff: noqa: E501
"""
`torchvision.models.regnet_x_800mf` from torchvision, random weights (weights=None), 7,259,656
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.regnet_x_800mf.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python regnet_x_800mf.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.regnet_x_800mf(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
