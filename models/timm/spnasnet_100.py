# labels: name::spnasnet_100 author::timm task::computer_vision family::efficientnet kind::classification
# ruff: noqa: E501
"""
`spnasnet_100` from timm (family `efficientnet`: timm/models/efficientnet.py), random weights,
4,421,616 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/efficientnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python spnasnet_100.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("spnasnet_100", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
