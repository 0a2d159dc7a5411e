# labels: name::focalnet_tiny_srf author::timm task::computer_vision family::focalnet kind::classification
# ruff: noqa: E501
"""
`focalnet_tiny_srf` from timm (family `focalnet`: timm/models/focalnet.py), random weights,
28,427,116 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/focalnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python focalnet_tiny_srf.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("focalnet_tiny_srf", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
