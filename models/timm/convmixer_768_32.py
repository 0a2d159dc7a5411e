# labels: name::convmixer_768_32 author::timm task::computer_vision family::convmixer kind::classification
# ruff: noqa: E501
"""
`convmixer_768_32` from timm (family `convmixer`: timm/models/convmixer.py), random weights,
21,110,248 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/convmixer.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python convmixer_768_32.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("convmixer_768_32", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
