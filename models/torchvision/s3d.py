# labels: name::s3d author::torchvision task::computer_vision family::s3d kind::video
"""
`torchvision.models.video.s3d` from torchvision, random weights (weights=None), 8,320,048
parameters.

A video model: the input is a clip of 16 frames, shape (batch, channels, frames, height, width),
frames of 224x224 (--height/--width).

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.video.s3d.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python s3d.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
num_frames = 16  # clip length (not a standard parameter)

# model and inputs
model = torchvision.models.video.s3d(weights=None)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, num_frames, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
