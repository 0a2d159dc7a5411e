# labels: name::rt_detr author::huggingface task::computer_vision family::rt_detr kind::vision
"""
transformers.RTDetrModel (vision model) built from transformers.RTDetrConfig with its default
configuration, random weights, 41,932,326 parameters.

The model has a fixed 3-channel input.

Source: https://huggingface.co/docs/transformers/model_doc/rt_detr
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python rt_detr.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.RTDetrConfig()
model = transformers.RTDetrModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
