# labels: name::mobilenetv3_small_050 author::timm task::computer_vision family::mobilenetv3 kind::classification
# ruff: noqa: E501
"""
`mobilenetv3_small_050` from timm (family `mobilenetv3`: timm/models/mobilenetv3.py), random
weights, 1,593,224 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/mobilenetv3.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mobilenetv3_small_050.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("mobilenetv3_small_050", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
