# labels: name::flexivit_small author::timm task::computer_vision family::vision_transformer kind::classification
# ruff: noqa: E501
"""
`flexivit_small` from timm (family `vision_transformer`: timm/models/vision_transformer.py),
random weights, 22,050,280 parameters.

The model is built for the input size (img_size=(height, width)): its position embeddings (or
attention windows) are tied to the image size, so height and width must be multiples of its
patch size (or window size).

timm's default input size for this model is 3x240x240 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 240 --width 240 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/vision_transformer.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python flexivit_small.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model(
    "flexivit_small",
    pretrained=False,
    in_chans=num_channels,
    img_size=(height, width),
)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
