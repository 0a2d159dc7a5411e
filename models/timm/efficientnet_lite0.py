# labels: name::efficientnet_lite0 author::timm task::computer_vision family::efficientnet kind::classification
# ruff: noqa: E501
"""
`efficientnet_lite0` from timm (family `efficientnet`: timm/models/efficientnet.py), random
weights, 4,652,008 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/efficientnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python efficientnet_lite0.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("efficientnet_lite0", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
