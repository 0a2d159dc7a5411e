# labels: name::gemma4_vit_167m author::timm task::computer_vision family::gemma4_vit kind::classification
# ruff: noqa: E501
"""
`gemma4_vit_167m` from timm (family `gemma4_vit`: timm/models/gemma4_vit.py), random weights,
167,364,608 parameters.

timm's default input size for this model is 3x768x768 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 768 --width 768 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/gemma4_vit.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python gemma4_vit_167m.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("gemma4_vit_167m", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
