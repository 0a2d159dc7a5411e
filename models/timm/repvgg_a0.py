# labels: name::repvgg_a0 author::timm task::computer_vision family::byobnet kind::classification
"""
`repvgg_a0` from timm (family `byobnet`: timm/models/byobnet.py), random weights, 9,108,968
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/byobnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python repvgg_a0.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("repvgg_a0", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
