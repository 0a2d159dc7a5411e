# labels: name::nasnetalarge author::timm task::computer_vision family::nasnet kind::classification
"""
`nasnetalarge` from timm (family `nasnet`: timm/models/nasnet.py), random weights, 88,753,150
parameters.

timm's default input size for this model is 3x331x331 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 331 --width 331 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/nasnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python nasnetalarge.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("nasnetalarge", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
