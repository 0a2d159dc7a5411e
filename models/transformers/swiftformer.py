# labels: name::swiftformer author::huggingface task::computer_vision family::swiftformer kind::vision
# ruff: noqa: E501
"""
transformers.SwiftFormerModel (vision model) built from transformers.SwiftFormerConfig with its
default configuration, random weights, 3,032,920 parameters.

The model is built for the input size (image_size=height): square images.

Source: https://huggingface.co/docs/transformers/model_doc/swiftformer
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python swiftformer.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width:
    raise ValueError(f"swiftformer is built for square images (image_size=height), got "
                     f"{height}x{width}")

# model and inputs
config = transformers.SwiftFormerConfig(image_size=height, num_channels=num_channels)
model = transformers.SwiftFormerModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
