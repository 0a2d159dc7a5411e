# labels: name::skresnet18 author::timm task::computer_vision family::sknet kind::classification
"""
`skresnet18` from timm (family `sknet`: timm/models/sknet.py), random weights, 11,958,056
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/sknet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python skresnet18.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("skresnet18", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
