# labels: name::dla46x_c author::timm task::computer_vision family::dla kind::classification
"""
`dla46x_c` from timm (family `dla`: timm/models/dla.py), random weights, 1,068,440 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/dla.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python dla46x_c.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("dla46x_c", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
