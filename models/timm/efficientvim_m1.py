# labels: name::efficientvim_m1 author::timm task::computer_vision family::efficientvim kind::classification
# ruff: noqa: E501
"""
`efficientvim_m1` from timm (family `efficientvim`: timm/models/efficientvim.py), random
weights, 6,679,458 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/efficientvim.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python efficientvim_m1.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("efficientvim_m1", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
