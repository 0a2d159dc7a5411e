# labels: name::mnasnet_small author::timm task::computer_vision family::efficientnet kind::classification
# ruff: noqa: E501
"""
`mnasnet_small` from timm (family `efficientnet`: timm/models/efficientnet.py), random weights,
2,030,264 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/efficientnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mnasnet_small.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("mnasnet_small", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
