# labels: name::qwen3_vit_88m author::timm task::computer_vision family::qwen3_vit kind::classification
# ruff: noqa: E501
"""
`qwen3_vit_88m` from timm (family `qwen3_vit`: timm/models/qwen3_vit.py), random weights,
87,414,528 parameters.

timm's default input size for this model is 3x768x768 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 768 --width 768 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/qwen3_vit.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python qwen3_vit_88m.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("qwen3_vit_88m", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
