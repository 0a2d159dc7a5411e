# labels: name::lowformer_b0 author::timm task::computer_vision family::lowformer kind::classification
# ruff: noqa: E501
"""
`lowformer_b0` from timm (family `lowformer`: timm/models/lowformer.py), random weights,
14,100,472 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/lowformer.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python lowformer_b0.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("lowformer_b0", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
