# labels: name::swinv2_cr_tiny_224 author::timm task::computer_vision family::swin_transformer_v2_cr kind::classification
# ruff: noqa: E501
"""
`swinv2_cr_tiny_224` from timm (family `swin_transformer_v2_cr`:
timm/models/swin_transformer_v2_cr.py), random weights, 28,332,124 parameters.

The model is built for the input size (img_size=(height, width)): its position embeddings (or
attention windows) are tied to the image size, so height and width must be multiples of its
patch size (or window size).

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/swin_transformer_v2_cr.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python swinv2_cr_tiny_224.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model(
    "swinv2_cr_tiny_224",
    pretrained=False,
    in_chans=num_channels,
    img_size=(height, width),
)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
