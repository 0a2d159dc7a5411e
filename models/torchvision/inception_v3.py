# labels: name::inception_v3 author::torchvision task::computer_vision family::inception kind::classification
# ruff: noqa: E501
"""
`torchvision.models.inception_v3` from torchvision, random weights (weights=None), 27,161,264
parameters.

Its native input size is 3x299x299 (pass --height 299 --width 299); it needs at least 75x75. In
eval mode the auxiliary classifier is not run.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.inception_v3.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python inception_v3.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.inception_v3(weights=None, init_weights=True)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
