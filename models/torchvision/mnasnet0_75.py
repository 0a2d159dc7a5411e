# labels: name::mnasnet0_75 author::torchvision task::computer_vision family::mnasnet kind::classification
# ruff: noqa: E501
"""
`torchvision.models.mnasnet0_75` from torchvision, random weights (weights=None), 3,170,208
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.mnasnet0_75.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mnasnet0_75.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.mnasnet0_75(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
