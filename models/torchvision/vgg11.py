# labels: name::vgg11 author::torchvision task::computer_vision family::vgg kind::classification
"""
`torchvision.models.vgg11` from torchvision, random weights (weights=None), 132,863,336
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.vgg11.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python vgg11.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.vgg11(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
