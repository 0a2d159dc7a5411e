# labels: name::seresnextaa101d_32x8d author::timm task::computer_vision family::resnet kind::classification
# ruff: noqa: E501
"""
`seresnextaa101d_32x8d` from timm (family `resnet`: timm/models/resnet.py), random weights,
93,588,280 parameters.

timm's default input size for this model is 3x288x288 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 288 --width 288 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/resnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python seresnextaa101d_32x8d.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("seresnextaa101d_32x8d", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
