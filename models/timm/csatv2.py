# labels: name::csatv2 author::timm task::computer_vision family::csatv2 kind::classification
"""
`csatv2` from timm (family `csatv2`: timm/models/csatv2.py), random weights, 11,103,444
parameters.

timm's default input size for this model is 3x512x512 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 512 --width 512 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/csatv2.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python csatv2.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("csatv2", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
