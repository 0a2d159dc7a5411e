# labels: name::densenet121 author::torchvision task::computer_vision
"""
DenseNet-121 from torchvision, random weights.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.densenet121.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python densenet121.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.densenet121(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
