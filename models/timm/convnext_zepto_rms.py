# labels: name::convnext_zepto_rms author::timm task::computer_vision family::convnext kind::classification
# ruff: noqa: E501
"""
`convnext_zepto_rms` from timm (family `convnext`: timm/models/convnext.py), random weights,
2,155,656 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/convnext.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python convnext_zepto_rms.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("convnext_zepto_rms", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
