# labels: name::res2next50 author::timm task::computer_vision family::res2net kind::classification
"""
`res2next50` from timm (family `res2net`: timm/models/res2net.py), random weights, 24,671,464
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/res2net.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python res2next50.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("res2next50", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
