# labels: name::mobilevitv2 author::huggingface task::computer_vision family::mobilevitv2 kind::vision
# ruff: noqa: E501
"""
transformers.MobileViTV2Model (vision model) built from transformers.MobileViTV2Config with its
default configuration, random weights, 4,388,841 parameters.

The model is built for the input size (image_size=height): square images; the config's default
image size is 256x256.

Source: https://huggingface.co/docs/transformers/model_doc/mobilevitv2
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mobilevitv2.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width:
    raise ValueError(f"mobilevitv2 is built for square images (image_size=height), got "
                     f"{height}x{width}")

# model and inputs
config = transformers.MobileViTV2Config(image_size=height, num_channels=num_channels)
model = transformers.MobileViTV2Model(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
