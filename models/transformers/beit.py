# labels: name::beit author::huggingface task::computer_vision family::beit kind::vision
"""
transformers.BeitModel (vision model) built from transformers.BeitConfig with its default
configuration, random weights, 85,656,576 parameters.

The model is built for the input size (image_size=height): square images.

Source: https://huggingface.co/docs/transformers/model_doc/beit
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python beit.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width:
    raise ValueError(f"beit is built for square images (image_size=height), got "
                     f"{height}x{width}")

# model and inputs
config = transformers.BeitConfig(image_size=height, num_channels=num_channels)
model = transformers.BeitModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
