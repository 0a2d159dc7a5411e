# labels: name::deformable_detr author::huggingface task::computer_vision family::deformable_detr kind::vision
# ruff: noqa: E501
"""
transformers.DeformableDetrModel (vision model) built from transformers.DeformableDetrConfig
with its default configuration, random weights, 39,913,666 parameters.

Source: https://huggingface.co/docs/transformers/model_doc/deformable_detr
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python deformable_detr.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.DeformableDetrConfig(num_channels=num_channels)
model = transformers.DeformableDetrModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
