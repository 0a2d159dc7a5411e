# labels: name::ghostnetv3_050 author::timm task::computer_vision family::ghostnet kind::classification
# ruff: noqa: E501
"""
`ghostnetv3_050` from timm (family `ghostnet`: timm/models/ghostnet.py), random weights,
3,395,384 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/ghostnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python ghostnetv3_050.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("ghostnetv3_050", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
