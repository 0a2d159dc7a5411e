# labels: name::tresnet_m author::timm task::computer_vision family::tresnet kind::classification
"""
`tresnet_m` from timm (family `tresnet`: timm/models/tresnet.py), random weights, 31,389,032
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/tresnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python tresnet_m.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("tresnet_m", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
