# labels: name::efficientnet author::huggingface task::computer_vision family::efficientnet kind::vision
# ruff: noqa: E501
"""
transformers.EfficientNetModel (vision model) built from transformers.EfficientNetConfig with
its default configuration, random weights, 63,786,960 parameters.

The model is built for the input size (image_size=height): square images; the config's default
image size is 600x600.

Source: https://huggingface.co/docs/transformers/model_doc/efficientnet
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python efficientnet.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width:
    raise ValueError(f"efficientnet is built for square images (image_size=height), got "
                     f"{height}x{width}")

# model and inputs
config = transformers.EfficientNetConfig(image_size=height, num_channels=num_channels)
model = transformers.EfficientNetModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
