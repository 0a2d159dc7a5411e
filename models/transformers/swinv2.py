# labels: name::swinv2 author::huggingface task::computer_vision family::swinv2 kind::vision
"""
transformers.Swinv2Model (vision model) built from transformers.Swinv2Config with its default
configuration, random weights, 27,578,154 parameters.

The model is built for the input size (image_size=height): square images.

Source: https://huggingface.co/docs/transformers/model_doc/swinv2
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python swinv2.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width:
    raise ValueError(f"swinv2 is built for square images (image_size=height), got "
                     f"{height}x{width}")

# model and inputs
config = transformers.Swinv2Config(image_size=height, num_channels=num_channels)
model = transformers.Swinv2Model(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
