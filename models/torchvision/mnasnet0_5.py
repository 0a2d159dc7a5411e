# labels: name::mnasnet0_5 author::torchvision task::computer_vision
"""
MNASNet (0.5 depth multiplier) from torchvision, random weights.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.mnasnet0_5.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mnasnet0_5.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.mnasnet0_5(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
