# labels: name::gc_efficientnetv2_rw_t author::timm task::computer_vision family::efficientnet kind::classification
# ruff: noqa: E501
"""
`gc_efficientnetv2_rw_t` from timm (family `efficientnet`: timm/models/efficientnet.py), random
weights, 13,677,713 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/efficientnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python gc_efficientnetv2_rw_t.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("gc_efficientnetv2_rw_t", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
