# labels: name::halo2botnet50ts_256 author::timm task::computer_vision family::byoanet kind::classification
# ruff: noqa: E501
"""
`halo2botnet50ts_256` from timm (family `byoanet`: timm/models/byoanet.py), random weights,
22,635,360 parameters.

This model does not run at 224x224 (its attention layers need the feature-map sizes of its
native input), so the script sets height and width to 256x256, its native size, and ignores
--height/--width.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/byoanet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python halo2botnet50ts_256.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
height, width = 256, 256  # this model only runs at 256x256: --height/--width are ignored

# model and inputs
model = timm.create_model("halo2botnet50ts_256", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
