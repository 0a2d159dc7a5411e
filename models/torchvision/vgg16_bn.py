# labels: name::vgg16_bn author::torchvision task::computer_vision family::vgg kind::classification
"""
`torchvision.models.vgg16_bn` from torchvision, random weights (weights=None), 138,365,992
parameters.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.vgg16_bn.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python vgg16_bn.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.vgg16_bn(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
