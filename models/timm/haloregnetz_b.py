# labels: name::haloregnetz_b author::timm task::computer_vision family::byoanet kind::classification
# ruff: noqa: E501
"""
`haloregnetz_b` from timm (family `byoanet`: timm/models/byoanet.py), random weights, 11,680,072
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/byoanet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python haloregnetz_b.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("haloregnetz_b", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
