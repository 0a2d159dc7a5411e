# labels: name::maxvit_t author::torchvision task::computer_vision family::maxvit kind::classification
# ruff: noqa: E501
"""
`torchvision.models.maxvit_t` from torchvision, random weights (weights=None), 30,919,624
parameters.

The model is built for the input size (input_size=(height, width)); height and width must be
multiples of 32 (its attention windows and grids are 7x7 on the 1/32 feature map: 224 works, the
default).

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.maxvit_t.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python maxvit_t.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.maxvit_t(weights=None, input_size=(height, width))
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
