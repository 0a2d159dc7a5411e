# labels: name::sam2_hiera_tiny author::timm task::computer_vision family::hieradet_sam2 kind::classification
# ruff: noqa: E501
"""
`sam2_hiera_tiny` from timm (family `hieradet_sam2`: timm/models/hieradet_sam2.py), random
weights, 26,851,008 parameters.

timm's default input size for this model is 3x896x896 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 896 --width 896 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/hieradet_sam2.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python sam2_hiera_tiny.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("sam2_hiera_tiny", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
