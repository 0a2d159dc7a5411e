# labels: name::rexnetr_100 author::timm task::computer_vision family::rexnet kind::classification
"""
`rexnetr_100` from timm (family `rexnet`: timm/models/rexnet.py), random weights, 4,883,304
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/rexnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python rexnetr_100.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("rexnetr_100", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
