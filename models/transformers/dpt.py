# labels: name::dpt author::huggingface task::computer_vision family::dpt kind::vision
"""
transformers.DPTModel (vision model) built from transformers.DPTConfig with its default
configuration, random weights, 86,389,248 parameters.

The model is built for the input size (image_size=height): square images; the config's default
image size is 384x384.

Source: https://huggingface.co/docs/transformers/model_doc/dpt
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python dpt.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width:
    raise ValueError(f"dpt is built for square images (image_size=height), got "
                     f"{height}x{width}")

# model and inputs
config = transformers.DPTConfig(image_size=height, num_channels=num_channels)
model = transformers.DPTModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
