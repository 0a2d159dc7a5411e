# labels: name::dinov2 author::huggingface task::computer_vision family::dinov2 kind::vision
"""
transformers.Dinov2Model (vision model) built from transformers.Dinov2Config with its default
configuration, random weights, 85,725,696 parameters.

The model is built for the input size (image_size=height): square images.

Source: https://huggingface.co/docs/transformers/model_doc/dinov2
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python dinov2.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width:
    raise ValueError(f"dinov2 is built for square images (image_size=height), got "
                     f"{height}x{width}")

# model and inputs
config = transformers.Dinov2Config(image_size=height, num_channels=num_channels)
model = transformers.Dinov2Model(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
