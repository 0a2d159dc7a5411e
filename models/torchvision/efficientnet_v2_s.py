# labels: name::efficientnet_v2_s author::torchvision task::computer_vision family::efficientnet_v2 kind::classification
# ruff: noqa: E501
"""
`torchvision.models.efficientnet_v2_s` from torchvision, random weights (weights=None),
21,458,488 parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.efficientnet_v2_s.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python efficientnet_v2_s.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.efficientnet_v2_s(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
