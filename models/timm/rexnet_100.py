# labels: name::rexnet_100 author::timm task::computer_vision family::rexnet kind::classification
"""
`rexnet_100` from timm (family `rexnet`: timm/models/rexnet.py), random weights, 4,796,873
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/rexnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python rexnet_100.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("rexnet_100", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
