# labels: name::poolformer_s12 author::timm task::computer_vision family::metaformer kind::classification
# ruff: noqa: E501
"""
`poolformer_s12` from timm (family `metaformer`: timm/models/metaformer.py), random weights,
11,915,176 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/metaformer.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python poolformer_s12.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("poolformer_s12", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
