# labels: name::repvit_m1 author::timm task::computer_vision family::repvit kind::classification
"""
`repvit_m1` from timm (family `repvit`: timm/models/repvit.py), random weights, 5,485,248
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/repvit.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python repvit_m1.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("repvit_m1", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
