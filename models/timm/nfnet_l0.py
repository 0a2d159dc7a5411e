# labels: name::nfnet_l0 author::timm task::computer_vision family::nfnet kind::classification
"""
`nfnet_l0` from timm (family `nfnet`: timm/models/nfnet.py), random weights, 35,074,488
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/nfnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python nfnet_l0.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("nfnet_l0", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
