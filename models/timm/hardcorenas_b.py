# labels: name::hardcorenas_b author::timm task::computer_vision family::hardcorenas kind::classification
# ruff: noqa: E501
"""
`hardcorenas_b` from timm (family `hardcorenas`: timm/models/hardcorenas.py), random weights,
5,176,544 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/hardcorenas.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python hardcorenas_b.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("hardcorenas_b", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
