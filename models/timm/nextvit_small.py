# labels: name::nextvit_small author::timm task::computer_vision family::nextvit kind::classification
# ruff: noqa: E501
"""
`nextvit_small` from timm (family `nextvit`: timm/models/nextvit.py), random weights, 31,763,368
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/nextvit.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python nextvit_small.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("nextvit_small", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
