# labels: name::fbnetv3_b author::timm task::computer_vision family::mobilenetv3 kind::classification
# ruff: noqa: E501
"""
`fbnetv3_b` from timm (family `mobilenetv3`: timm/models/mobilenetv3.py), random weights,
8,598,464 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/mobilenetv3.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python fbnetv3_b.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("fbnetv3_b", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
