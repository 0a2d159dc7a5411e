# labels: name::shufflenet_v2_x2_0 author::torchvision task::computer_vision family::shufflenet_v2 kind::classification
# ruff: noqa: E501
"""
`torchvision.models.shufflenet_v2_x2_0` from torchvision, random weights (weights=None),
7,393,996 parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.shufflenet_v2_x2_0.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python shufflenet_v2_x2_0.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.shufflenet_v2_x2_0(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
