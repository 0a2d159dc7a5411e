# labels: name::vit_b_32 author::torchvision task::computer_vision family::vit kind::classification
"""
`torchvision.models.vit_b_32` from torchvision, random weights (weights=None), 88,224,232
parameters.

The model is built for the input size (image_size=height): its position embeddings depend on the
number of 32x32 patches, so it needs square images with a side divisible by 32.

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.vit_b_32.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python vit_b_32.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width or height % 32:
    raise ValueError(f"vit_b_32 needs square images with a side divisible by 32, got "
                     f"{height}x{width}")

# model and inputs
model = torchvision.models.vit_b_32(weights=None, image_size=height)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
