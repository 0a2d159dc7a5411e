# labels: name::gernet_s author::timm task::computer_vision family::byobnet kind::classification
"""
`gernet_s` from timm (family `byobnet`: timm/models/byobnet.py), random weights, 8,173,761
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/byobnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python gernet_s.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("gernet_s", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
