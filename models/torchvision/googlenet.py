# labels: name::googlenet author::torchvision task::computer_vision
"""
GoogLeNet (Inception v1) from torchvision, random weights.

Built without the auxiliary classifiers (aux_logits=False), so the model returns a plain
tensor; init_weights=True gives the explicit (truncated normal) initialization and avoids
torchvision's warning about the default changing.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.googlenet.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python googlenet.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
