# labels: name::resnest14d author::timm task::computer_vision family::resnest kind::classification
"""
`resnest14d` from timm (family `resnest`: timm/models/resnest.py), random weights, 10,611,688
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/resnest.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python resnest14d.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("resnest14d", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
