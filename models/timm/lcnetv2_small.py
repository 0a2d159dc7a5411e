# labels: name::lcnetv2_small author::timm task::computer_vision family::lcnetv2 kind::classification
# ruff: noqa: E501
"""
`lcnetv2_small` from timm (family `lcnetv2`: timm/models/lcnetv2.py), random weights, 4,128,552
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/lcnetv2.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python lcnetv2_small.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("lcnetv2_small", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
