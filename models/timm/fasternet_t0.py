# labels: name::fasternet_t0 author::timm task::computer_vision family::fasternet kind::classification
# ruff: noqa: E501
"""
`fasternet_t0` from timm (family `fasternet`: timm/models/fasternet.py), random weights,
3,905,500 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/fasternet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python fasternet_t0.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("fasternet_t0", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
