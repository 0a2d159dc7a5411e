# labels: name::efficientformerv2_s0 author::timm task::computer_vision family::efficientformer_v2 kind::classification
# ruff: noqa: E501
"""
`efficientformerv2_s0` from timm (family `efficientformer_v2`:
timm/models/efficientformer_v2.py), random weights, 3,600,256 parameters.

The model is built for the input size (img_size=(height, width)): its position embeddings (or
attention windows) are tied to the image size, so height and width must be multiples of its
patch size (or window size).

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/efficientformer_v2.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python efficientformerv2_s0.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model(
    "efficientformerv2_s0",
    pretrained=False,
    in_chans=num_channels,
    img_size=(height, width),
)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
