# labels: name::mobilenet_v3_small author::torchvision task::computer_vision
"""
MobileNetV3-Small from torchvision, random weights.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.mobilenet_v3_small.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mobilenet_v3_small.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.mobilenet_v3_small(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
