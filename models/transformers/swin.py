# labels: name::swin author::huggingface task::computer_vision family::swin kind::vision
"""
transformers.SwinModel (vision model) built from transformers.SwinConfig with its default
configuration, random weights, 27,519,354 parameters.

The model is built for the input size (image_size=height): square images.

Source: https://huggingface.co/docs/transformers/model_doc/swin
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python swin.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width:
    raise ValueError(f"swin is built for square images (image_size=height), got "
                     f"{height}x{width}")

# model and inputs
config = transformers.SwinConfig(image_size=height, num_channels=num_channels)
model = transformers.SwinModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
