# labels: name::hiera author::huggingface task::computer_vision family::hiera kind::vision
"""
transformers.HieraModel (vision model) built from transformers.HieraConfig with its default
configuration, random weights, 50,755,968 parameters.

The model is built for the input size (image_size=[height, width]).

Source: https://huggingface.co/docs/transformers/model_doc/hiera
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python hiera.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.HieraConfig(image_size=[height, width], num_channels=num_channels)
model = transformers.HieraModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
