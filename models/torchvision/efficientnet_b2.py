# labels: name::efficientnet_b2 author::torchvision task::computer_vision family::efficientnet kind::classification
# ruff: noqa: E501
"""
`torchvision.models.efficientnet_b2` from torchvision, random weights (weights=None), 9,109,994
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.efficientnet_b2.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python efficientnet_b2.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.efficientnet_b2(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
