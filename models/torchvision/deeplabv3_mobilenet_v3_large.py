# labels: name::deeplabv3_mobilenet_v3_large author::torchvision task::computer_vision family::deeplabv3 kind::segmentation
# ruff: noqa: E501
"""
`torchvision.models.segmentation.deeplabv3_mobilenet_v3_large` from torchvision, random weights
(weights=None, weights_backbone=None), 11,025,477 parameters.

Returns an OrderedDict with the per-pixel class scores (`out`, 21 classes, the input's size); no
auxiliary classifier.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.segmentation.deeplabv3_mobilenet_v3_large.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python deeplabv3_mobilenet_v3_large.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
    weights=None,
    weights_backbone=None,
)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
