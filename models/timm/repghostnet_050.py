# labels: name::repghostnet_050 author::timm task::computer_vision family::repghost kind::classification
# ruff: noqa: E501
"""
`repghostnet_050` from timm (family `repghost`: timm/models/repghost.py), random weights,
2,313,968 parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/repghost.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python repghostnet_050.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("repghostnet_050", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
