# labels: name::hgnetv2_b0 author::timm task::computer_vision family::hgnet kind::classification
"""
`hgnetv2_b0` from timm (family `hgnet`: timm/models/hgnet.py), random weights, 5,996,550
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/hgnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python hgnetv2_b0.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("hgnetv2_b0", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
