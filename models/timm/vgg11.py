# labels: name::vgg11 author::timm task::computer_vision family::vgg kind::classification
"""
`vgg11` from timm (family `vgg`: timm/models/vgg.py), random weights, 132,863,336 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/vgg.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python vgg11.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("vgg11", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
