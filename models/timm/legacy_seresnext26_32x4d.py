# labels: name::legacy_seresnext26_32x4d author::timm task::computer_vision family::senet kind::classification
# ruff: noqa: E501
"""
`legacy_seresnext26_32x4d` from timm (family `senet`: timm/models/senet.py), random weights,
16,790,280 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/senet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python legacy_seresnext26_32x4d.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("legacy_seresnext26_32x4d", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
