# labels: name::inception_v3 author::timm task::computer_vision family::inception_v3 kind::classification
# ruff: noqa: E501
"""
`inception_v3` from timm (family `inception_v3`: timm/models/inception_v3.py), random weights,
23,834,568 parameters.

timm's default input size for this model is 3x299x299 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 299 --width 299 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/inception_v3.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python inception_v3.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("inception_v3", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
