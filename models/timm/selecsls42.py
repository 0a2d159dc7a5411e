# labels: name::selecsls42 author::timm task::computer_vision family::selecsls kind::classification
"""
`selecsls42` from timm (family `selecsls`: timm/models/selecsls.py), random weights, 30,354,952
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/selecsls.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python selecsls42.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("selecsls42", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
