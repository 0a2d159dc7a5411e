# labels: name::efficientnet_b0 author::timm task::computer_vision
"""
EfficientNet-B0 from timm, random weights.

Source: https://huggingface.co/timm/efficientnet_b0.ra_in1k
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python efficientnet_b0.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("efficientnet_b0", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
