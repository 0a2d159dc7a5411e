# labels: name::shufflenet_v2_x1_5 author::torchvision task::computer_vision family::shufflenet_v2 kind::classification
# ruff: noqa: E501
"""
`torchvision.models.shufflenet_v2_x1_5` from torchvision, random weights (weights=None),
3,503,624 parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.shufflenet_v2_x1_5.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python shufflenet_v2_x1_5.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.shufflenet_v2_x1_5(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
