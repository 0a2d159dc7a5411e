# labels: name::resnetrs50 author::timm task::computer_vision family::resnet kind::classification
"""
`resnetrs50` from timm (family `resnet`: timm/models/resnet.py), random weights, 35,691,912
parameters.

timm's default input size for this model is 3x160x160 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 160 --width 160 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/resnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python resnetrs50.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("resnetrs50", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
