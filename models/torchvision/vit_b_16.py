# labels: name::vit_b_16 author::torchvision task::computer_vision
"""
Vision Transformer ViT-B/16 from torchvision, random weights.

The model is built for square images of side `height` (image_size=height), since its position
embeddings are fixed to the number of 16x16 patches; height and width must be equal and
divisible by 16 (default 224).

Source: https://pytorch.org/vision/stable/models/generated/torchvision.models.vit_b_16.html
"""
import torch
import torchvision

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python vit_b_16.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width or height % 16:
    raise ValueError(f"vit_b_16 needs square images with a side divisible by 16, got "
                     f"{height}x{width}")

# model and inputs
model = torchvision.models.vit_b_16(weights=None, image_size=height)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
