# labels: name::davit_tiny author::timm task::computer_vision family::davit kind::classification
"""
`davit_tiny` from timm (family `davit`: timm/models/davit.py), random weights, 28,360,168
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/davit.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python davit_tiny.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("davit_tiny", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
