# labels: name::dpn48b author::timm task::computer_vision family::dpn kind::classification
"""
`dpn48b` from timm (family `dpn`: timm/models/dpn.py), random weights, 9,126,226 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/dpn.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python dpn48b.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("dpn48b", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
