# labels: name::swin_s author::torchvision task::computer_vision family::swin kind::classification
"""
`torchvision.models.swin_s` from torchvision, random weights (weights=None), 49,606,258
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.swin_s.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python swin_s.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.swin_s(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
