# labels: name::rdnet_tiny author::timm task::computer_vision family::rdnet kind::classification
"""
`rdnet_tiny` from timm (family `rdnet`: timm/models/rdnet.py), random weights, 23,863,008
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/rdnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python rdnet_tiny.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("rdnet_tiny", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
