# labels: name::inception_next_atto author::timm task::computer_vision family::inception_next kind::classification
# ruff: noqa: E501
"""
`inception_next_atto` from timm (family `inception_next`: timm/models/inception_next.py), random
weights, 4,156,520 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/inception_next.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python inception_next_atto.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("inception_next_atto", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
