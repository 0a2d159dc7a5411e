# labels: name::maskformer author::huggingface task::computer_vision family::maskformer kind::vision
"""
transformers.MaskFormerModel (vision model) built from transformers.MaskFormerConfig with its
default configuration, random weights, 101,595,256 parameters.

The model has a fixed 3-channel input.

Source: https://huggingface.co/docs/transformers/model_doc/maskformer
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python maskformer.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.MaskFormerConfig()
model = transformers.MaskFormerModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
