# labels: name::resnet author::huggingface task::computer_vision family::resnet kind::vision
"""
transformers.ResNetModel (vision model) built from transformers.ResNetConfig with its default
configuration, random weights, 23,508,032 parameters.

Source: https://huggingface.co/docs/transformers/model_doc/resnet
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python resnet.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.ResNetConfig(num_channels=num_channels)
model = transformers.ResNetModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
