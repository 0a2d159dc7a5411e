# labels: name::hgnet_tiny author::timm task::computer_vision family::hgnet kind::classification
"""
`hgnet_tiny` from timm (family `hgnet`: timm/models/hgnet.py), random weights, 14,735,864
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/hgnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python hgnet_tiny.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("hgnet_tiny", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
