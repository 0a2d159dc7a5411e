# labels: name::caformer_s18 author::timm task::computer_vision family::metaformer kind::classification
# ruff: noqa: E501
"""
`caformer_s18` from timm (family `metaformer`: timm/models/metaformer.py), random weights,
26,341,656 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/metaformer.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python caformer_s18.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("caformer_s18", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
