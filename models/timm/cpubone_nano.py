# labels: name::cpubone_nano author::timm task::computer_vision family::cpubone kind::classification
"""
`cpubone_nano` from timm (family `cpubone`: timm/models/cpubone.py), random weights, 6,519,700
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/cpubone.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python cpubone_nano.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("cpubone_nano", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
