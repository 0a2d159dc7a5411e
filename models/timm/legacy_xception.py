# labels: name::legacy_xception author::timm task::computer_vision family::xception kind::classification
# ruff: noqa: E501
"""
`legacy_xception` from timm (family `xception`: timm/models/xception.py), random weights,
22,855,952 parameters.

timm's default input size for this model is 3x299x299 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 299 --width 299 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/xception.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python legacy_xception.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("legacy_xception", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
