# labels: name::vit_tiny_patch16_dinov3_qkvb author::timm task::computer_vision family::eva kind::classification
# ruff: noqa: E501
"""
`vit_tiny_patch16_dinov3_qkvb` from timm (family `eva`: timm/models/eva.py), random weights,
5,489,664 parameters.

The model is built for the input size (img_size=(height, width)): its position embeddings (or
attention windows) are tied to the image size, so height and width must be multiples of its
patch size (or window size).

timm's default input size for this model is 3x256x256 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 256 --width 256 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/eva.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python vit_tiny_patch16_dinov3_qkvb.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model(
    "vit_tiny_patch16_dinov3_qkvb",
    pretrained=False,
    in_chans=num_channels,
    img_size=(height, width),
)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
