# labels: name::regnet author::huggingface task::computer_vision family::regnet kind::vision
"""
transformers.RegNetModel (vision model) built from transformers.RegNetConfig with its default
configuration, random weights, 19,557,656 parameters.

Source: https://huggingface.co/docs/transformers/model_doc/regnet
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python regnet.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.RegNetConfig(num_channels=num_channels)
model = transformers.RegNetModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
