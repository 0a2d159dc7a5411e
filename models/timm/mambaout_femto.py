# labels: name::mambaout_femto author::timm task::computer_vision family::mambaout kind::classification
# ruff: noqa: E501
"""
`mambaout_femto` from timm (family `mambaout`: timm/models/mambaout.py), random weights,
7,304,536 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/mambaout.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mambaout_femto.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("mambaout_femto", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
