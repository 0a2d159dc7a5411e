# labels: name::swin_v2_t author::torchvision task::computer_vision family::swin_v2 kind::classification
# ruff: noqa: E501
"""
`torchvision.models.swin_v2_t` from torchvision, random weights (weights=None), 28,351,570
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.swin_v2_t.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python swin_v2_t.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.swin_v2_t(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
