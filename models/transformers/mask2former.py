# labels: name::mask2former author::huggingface task::computer_vision family::mask2former kind::vision
# ruff: noqa: E501
"""
transformers.Mask2FormerModel (vision model) built from transformers.Mask2FormerConfig with its
default configuration, random weights, 68,720,266 parameters.

The model has a fixed 3-channel input.

Source: https://huggingface.co/docs/transformers/model_doc/mask2former
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mask2former.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.Mask2FormerConfig()
model = transformers.Mask2FormerModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
