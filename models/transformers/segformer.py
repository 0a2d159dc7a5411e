# labels: name::segformer author::huggingface task::computer_vision family::segformer kind::vision
"""
transformers.SegformerModel (vision model) built from transformers.SegformerConfig with its
default configuration, random weights, 3,319,392 parameters.

Source: https://huggingface.co/docs/transformers/model_doc/segformer
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python segformer.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.SegformerConfig(num_channels=num_channels)
model = transformers.SegformerModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
