# labels: name::convformer_s18 author::timm task::computer_vision family::metaformer kind::classification
# ruff: noqa: E501
"""
`convformer_s18` from timm (family `metaformer`: timm/models/metaformer.py), random weights,
26,774,448 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/metaformer.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python convformer_s18.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("convformer_s18", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
