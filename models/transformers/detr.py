# labels: name::detr author::huggingface task::computer_vision family::detr kind::vision
"""
transformers.DetrModel (vision model) built from transformers.DetrConfig with its default
configuration, random weights, 41,368,512 parameters.

Source: https://huggingface.co/docs/transformers/model_doc/detr
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python detr.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.DetrConfig(num_channels=num_channels)
model = transformers.DetrModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
