# labels: name::sequencer2d_s author::timm task::computer_vision family::sequencer kind::classification
# ruff: noqa: E501
"""
`sequencer2d_s` from timm (family `sequencer`: timm/models/sequencer.py), random weights,
27,651,688 parameters.

The model is built for the input size (img_size=(height, width)): its position embeddings (or
attention windows) are tied to the image size, so height and width must be multiples of its
patch size (or window size).

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/sequencer.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python sequencer2d_s.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model(
    "sequencer2d_s",
    pretrained=False,
    in_chans=num_channels,
    img_size=(height, width),
)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
