# labels: name::cvt author::huggingface task::computer_vision family::cvt kind::vision
"""
transformers.CvtModel (vision model) built from transformers.CvtConfig with its default
configuration, random weights, 19,611,712 parameters.

Source: https://huggingface.co/docs/transformers/model_doc/cvt
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python cvt.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.CvtConfig(num_channels=num_channels)
model = transformers.CvtModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
