# labels: name::mobilenet_v1 author::huggingface task::computer_vision family::mobilenet_v1 kind::vision
# ruff: noqa: E501
"""
transformers.MobileNetV1Model (vision model) built from transformers.MobileNetV1Config with its
default configuration, random weights, 3,206,976 parameters.

The model is built for the input size (image_size=height): square images.

Source: https://huggingface.co/docs/transformers/model_doc/mobilenet_v1
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mobilenet_v1.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width:
    raise ValueError(f"mobilenet_v1 is built for square images (image_size=height), got "
                     f"{height}x{width}")

# model and inputs
config = transformers.MobileNetV1Config(image_size=height, num_channels=num_channels)
model = transformers.MobileNetV1Model(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
