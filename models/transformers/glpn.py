# labels: name::glpn author::huggingface task::computer_vision family::glpn kind::vision
"""
transformers.GLPNModel (vision model) built from transformers.GLPNConfig with its default
configuration, random weights, 3,319,392 parameters.

Source: https://huggingface.co/docs/transformers/model_doc/glpn
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python glpn.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.GLPNConfig(num_channels=num_channels)
model = transformers.GLPNModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
