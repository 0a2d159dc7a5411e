# labels: name::cspnext_tiny author::timm task::computer_vision family::cspnext kind::classification
"""
`cspnext_tiny` from timm (family `cspnext`: timm/models/cspnext.py), random weights, 2,733,700
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/cspnext.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python cspnext_tiny.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("cspnext_tiny", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
