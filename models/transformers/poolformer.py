# labels: name::poolformer author::huggingface task::computer_vision family::poolformer kind::vision
"""
transformers.PoolFormerModel (vision model) built from transformers.PoolFormerConfig with its
default configuration, random weights, 11,401,152 parameters.

Source: https://huggingface.co/docs/transformers/model_doc/poolformer
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python poolformer.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.PoolFormerConfig(num_channels=num_channels)
model = transformers.PoolFormerModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
