# labels: name::maskrcnn_resnet50_fpn_v2 author::torchvision task::computer_vision family::maskrcnn kind::detection
# ruff: noqa: E501
"""
`torchvision.models.detection.maskrcnn_resnet50_fpn_v2` from torchvision, random weights
(weights=None, weights_backbone=None), 46,359,409 parameters.

A detection model takes a batch of images, a list of 3xHxW tensors or, as here, one batched
tensor (`images`, values in [0, 1]); it normalizes and resizes each image to 800 (shorter side),
1333 at most itself, and in eval mode returns one dict per image (boxes, labels, scores, masks).

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.detection.maskrcnn_resnet50_fpn_v2.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python maskrcnn_resnet50_fpn_v2.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.detection.maskrcnn_resnet50_fpn_v2(weights=None, weights_backbone=None)
model.eval()
inputs = {"images": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
