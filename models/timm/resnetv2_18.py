# labels: name::resnetv2_18 author::timm task::computer_vision family::resnetv2 kind::classification
"""
`resnetv2_18` from timm (family `resnetv2`: timm/models/resnetv2.py), random weights, 11,687,720
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/resnetv2.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python resnetv2_18.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("resnetv2_18", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
