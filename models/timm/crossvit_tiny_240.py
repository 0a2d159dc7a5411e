# labels: name::crossvit_tiny_240 author::timm task::computer_vision family::crossvit kind::classification
# ruff: noqa: E501
"""
`crossvit_tiny_240` from timm (family `crossvit`: timm/models/crossvit.py), random weights,
7,014,800 parameters.

This model does not run at 224x224 (its attention layers need the feature-map sizes of its
native input), so the script sets height and width to 240x240, its native size, and ignores
--height/--width.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/crossvit.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python crossvit_tiny_240.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
height, width = 240, 240  # this model only runs at 240x240: --height/--width are ignored

# model and inputs
model = timm.create_model("crossvit_tiny_240", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
