# labels: name::densenetblur121d author::timm task::computer_vision family::densenet kind::classification
# ruff: noqa: E501
"""
`densenetblur121d` from timm (family `densenet`: timm/models/densenet.py), random weights,
7,998,088 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/densenet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python densenetblur121d.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("densenetblur121d", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
