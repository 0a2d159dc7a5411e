# labels: name::naflexvit_base_patch16_parfac_gap author::timm task::computer_vision family::naflexvit kind::classification
# ruff: noqa: E501
"""
`naflexvit_base_patch16_parfac_gap` from timm (family `naflexvit`: timm/models/naflexvit.py),
random weights, 86,461,672 parameters.

timm's default input size for this model is 3x384x384 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 384 --width 384 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/naflexvit.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python naflexvit_base_patch16_parfac_gap.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model(
    "naflexvit_base_patch16_parfac_gap",
    pretrained=False,
    in_chans=num_channels,
)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
