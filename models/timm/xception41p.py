# labels: name::xception41p author::timm task::computer_vision family::xception_aligned kind::classification
# ruff: noqa: E501
"""
`xception41p` from timm (family `xception_aligned`: timm/models/xception_aligned.py), random
weights, 26,907,752 parameters.

timm's default input size for this model is 3x299x299 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 299 --width 299 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/xception_aligned.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python xception41p.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("xception41p", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
