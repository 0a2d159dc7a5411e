# labels: name::pvt_v2 author::huggingface task::computer_vision family::pvt_v2 kind::vision
"""
transformers.PvtV2Model (vision model) built from transformers.PvtV2Config with its default
configuration, random weights, 3,409,760 parameters.

The model is built for the input size (image_size=[height, width]).

Source: https://huggingface.co/docs/transformers/model_doc/pvt_v2
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python pvt_v2.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.PvtV2Config(image_size=[height, width], num_channels=num_channels)
model = transformers.PvtV2Model(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
