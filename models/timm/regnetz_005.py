# labels: name::regnetz_005 author::timm task::computer_vision family::regnet kind::classification
"""
`regnetz_005` from timm (family `regnet`: timm/models/regnet.py), random weights, 7,122,742
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/regnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python regnetz_005.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("regnetz_005", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
