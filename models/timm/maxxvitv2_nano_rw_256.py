# labels: name::maxxvitv2_nano_rw_256 author::timm task::computer_vision family::maxxvit kind::classification
# ruff: noqa: E501
"""
`maxxvitv2_nano_rw_256` from timm (family `maxxvit`: timm/models/maxxvit.py), random weights,
23,692,411 parameters.

The model is built for the input size (img_size=(height, width)): its position embeddings (or
attention windows) are tied to the image size, so height and width must be multiples of its
patch size (or window size).

timm's default input size for this model is 3x256x256 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 256 --width 256 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/maxxvit.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python maxxvitv2_nano_rw_256.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model(
    "maxxvitv2_nano_rw_256",
    pretrained=False,
    in_chans=num_channels,
    img_size=(height, width),
)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
