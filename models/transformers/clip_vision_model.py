# labels: name::clip_vision_model author::huggingface task::computer_vision family::clip_vision_model kind::vision
# ruff: noqa: E501
"""
transformers.CLIPVisionModel (vision model) built from transformers.CLIPVisionConfig with its
default configuration, random weights, 87,456,000 parameters.

The model is built for the input size (image_size=height): square images.

Source: https://huggingface.co/docs/transformers/model_doc/clip
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python clip_vision_model.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width:
    raise ValueError(f"clip_vision_model is built for square images (image_size=height), got "
                     f"{height}x{width}")

# model and inputs
config = transformers.CLIPVisionConfig(image_size=height, num_channels=num_channels)
model = transformers.CLIPVisionModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
