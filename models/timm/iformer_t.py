# labels: name::iformer_t author::timm task::computer_vision family::iformer kind::classification
"""
`iformer_t` from timm (family `iformer`: timm/models/iformer.py), random weights, 2,886,456
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/iformer.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python iformer_t.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("iformer_t", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
