# labels: name::beitv2_base_patch16_224 author::timm task::computer_vision family::beit kind::classification
# ruff: noqa: E501
"""
`beitv2_base_patch16_224` from timm (family `beit`: timm/models/beit.py), random weights,
86,530,984 parameters.

The model is built for the input size (img_size=(height, width)): its position embeddings (or
attention windows) are tied to the image size, so height and width must be multiples of its
patch size (or window size).

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/beit.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python beitv2_base_patch16_224.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model(
    "beitv2_base_patch16_224",
    pretrained=False,
    in_chans=num_channels,
    img_size=(height, width),
)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
