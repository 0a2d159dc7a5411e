# labels: name::tiny_vit_5m_224 author::timm task::computer_vision family::tiny_vit kind::classification
# ruff: noqa: E501
"""
`tiny_vit_5m_224` from timm (family `tiny_vit`: timm/models/tiny_vit.py), random weights,
12,082,725 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/tiny_vit.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python tiny_vit_5m_224.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("tiny_vit_5m_224", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
