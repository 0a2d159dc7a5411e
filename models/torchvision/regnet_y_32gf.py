# labels: name::regnet_y_32gf author::torchvision task::computer_vision family::regnet_y kind::classification
# ruff: noqa: E501
"""
`torchvision.models.regnet_y_32gf` from torchvision, random weights (weights=None), 145,046,770
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.regnet_y_32gf.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python regnet_y_32gf.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.regnet_y_32gf(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
