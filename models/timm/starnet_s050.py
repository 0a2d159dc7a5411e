# labels: name::starnet_s050 author::timm task::computer_vision family::starnet kind::classification
"""
`starnet_s050` from timm (family `starnet`: timm/models/starnet.py), random weights, 542,728
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/starnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python starnet_s050.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("starnet_s050", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
