# labels: name::cs3darknet_focus_s author::timm task::computer_vision family::cspnet kind::classification
# ruff: noqa: E501
"""
`cs3darknet_focus_s` from timm (family `cspnet`: timm/models/cspnet.py), random weights,
3,274,728 parameters.

timm's default input size for this model is 3x256x256 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 256 --width 256 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/cspnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python cs3darknet_focus_s.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("cs3darknet_focus_s", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
