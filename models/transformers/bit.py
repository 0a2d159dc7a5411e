# labels: name::bit author::huggingface task::computer_vision family::bit kind::vision
"""
transformers.BitModel (vision model) built from transformers.BitConfig with its default
configuration, random weights, 23,500,352 parameters.

Source: https://huggingface.co/docs/transformers/model_doc/bit
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python bit.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.BitConfig(num_channels=num_channels)
model = transformers.BitModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
