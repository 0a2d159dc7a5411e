# labels: name::bat_resnext26ts author::timm task::computer_vision family::byobnet kind::classification
# ruff: noqa: E501
"""
`bat_resnext26ts` from timm (family `byobnet`: timm/models/byobnet.py), random weights,
10,731,200 parameters.

This model does not run at 224x224 (its attention layers need the feature-map sizes of its
native input), so the script sets height and width to 256x256, its native size, and ignores
--height/--width.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/byobnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python bat_resnext26ts.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
height, width = 256, 256  # this model only runs at 256x256: --height/--width are ignored

# model and inputs
model = timm.create_model("bat_resnext26ts", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
