# labels: name::mobilenetv5_base author::timm task::computer_vision family::mobilenetv5 kind::classification
# ruff: noqa: E501
"""
`mobilenetv5_base` from timm (family `mobilenetv5`: timm/models/mobilenetv5.py), random weights,
82,647,976 parameters.

timm's default input size for this model is 3x256x256 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 256 --width 256 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/mobilenetv5.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mobilenetv5_base.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("mobilenetv5_base", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
