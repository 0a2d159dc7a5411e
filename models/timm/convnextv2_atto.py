# labels: name::convnextv2_atto author::timm task::computer_vision family::convnext kind::classification
# ruff: noqa: E501
"""
`convnextv2_atto` from timm (family `convnext`: timm/models/convnext.py), random weights,
3,708,400 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/convnext.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python convnextv2_atto.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("convnextv2_atto", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
