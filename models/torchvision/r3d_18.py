# labels: name::r3d_18 author::torchvision task::computer_vision family::r3d kind::video
"""
`torchvision.models.video.r3d_18` from torchvision, random weights (weights=None), 33,371,472
parameters.

A video model: the input is a clip of 16 frames, shape (batch, channels, frames, height, width),
frames of 112x112 (fixed here, the size it is trained at; --height/--width are ignored).

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.video.r3d_18.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python r3d_18.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
num_frames = 16  # clip length (not a standard parameter)
height, width = 112, 112  # the model's native frame size: --height/--width are ignored

# model and inputs
model = torchvision.models.video.r3d_18(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, num_frames, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
