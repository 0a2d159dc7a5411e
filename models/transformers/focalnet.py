# labels: name::focalnet author::huggingface task::computer_vision family::focalnet kind::vision
"""
transformers.FocalNetModel (vision model) built from transformers.FocalNetConfig with its
default configuration, random weights, 27,658,116 parameters.

The model is built for the input size (image_size=height): square images.

Source: https://huggingface.co/docs/transformers/model_doc/focalnet
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python focalnet.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width:
    raise ValueError(f"focalnet is built for square images (image_size=height), got "
                     f"{height}x{width}")

# model and inputs
config = transformers.FocalNetConfig(image_size=height, num_channels=num_channels)
model = transformers.FocalNetModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
