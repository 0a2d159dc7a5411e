# labels: name::levit author::huggingface task::computer_vision family::levit kind::vision
"""
transformers.LevitModel (vision model) built from transformers.LevitConfig with its default
configuration, random weights, 8,442,400 parameters.

The model is built for the input size (image_size=height): square images.

Source: https://huggingface.co/docs/transformers/model_doc/levit
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python levit.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width:
    raise ValueError(f"levit is built for square images (image_size=height), got "
                     f"{height}x{width}")

# model and inputs
config = transformers.LevitConfig(image_size=height, num_channels=num_channels)
model = transformers.LevitModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
