# labels: name::eca_vovnet39b author::timm task::computer_vision family::vovnet kind::classification
"""
`eca_vovnet39b` from timm (family `vovnet`: timm/models/vovnet.py), random weights, 22,600,316
parameters.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/vovnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python eca_vovnet39b.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("eca_vovnet39b", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
