# labels: name::nf_regnet_b0 author::timm task::computer_vision family::nfnet kind::classification
"""
`nf_regnet_b0` from timm (family `nfnet`: timm/models/nfnet.py), random weights, 8,764,288
parameters.

timm's default input size for this model is 3x192x192 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 192 --width 192 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/nfnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python nf_regnet_b0.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("nf_regnet_b0", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
