# labels: name::fcn_resnet50 author::torchvision task::computer_vision family::fcn kind::segmentation
# ruff: noqa: E501
"""
`torchvision.models.segmentation.fcn_resnet50` from torchvision, random weights (weights=None,
weights_backbone=None), 32,957,013 parameters.

Returns an OrderedDict with the per-pixel class scores (`out`, 21 classes, the input's size); no
auxiliary classifier.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.segmentation.fcn_resnet50.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python fcn_resnet50.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.segmentation.fcn_resnet50(weights=None, weights_backbone=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
