# labels: name::swin_b author::torchvision task::computer_vision family::swin kind::classification
"""
`torchvision.models.swin_b` from torchvision, random weights (weights=None), 87,768,224
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.swin_b.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python swin_b.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.swin_b(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
