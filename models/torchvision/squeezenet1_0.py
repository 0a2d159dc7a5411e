# labels: name::squeezenet1_0 author::torchvision task::computer_vision family::squeezenet kind::classification
# ruff: noqa: E501
"""
`torchvision.models.squeezenet1_0` from torchvision, random weights (weights=None), 1,248,424
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.squeezenet1_0.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python squeezenet1_0.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.squeezenet1_0(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
