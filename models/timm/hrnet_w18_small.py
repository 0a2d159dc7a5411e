# labels: name::hrnet_w18_small author::timm task::computer_vision family::hrnet kind::classification
# ruff: noqa: E501
"""
`hrnet_w18_small` from timm (family `hrnet`: timm/models/hrnet.py), random weights, 13,187,464
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/hrnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python hrnet_w18_small.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("hrnet_w18_small", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
