# labels: name::vit_tiny_patch16_224 author::timm task::computer_vision
"""
Vision Transformer ViT-Ti/16 from timm, random weights.

The model is built for the input size (img_size=(height, width)), since its position
embeddings are fixed to the number of 16x16 patches; height and width must be multiples
of 16 (default 224x224).

Source: https://huggingface.co/timm/vit_tiny_patch16_224.augreg_in21k_ft_in1k
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python vit_tiny_patch16_224.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model(
    "vit_tiny_patch16_224",
    pretrained=False,
    in_chans=num_channels,
    img_size=(height, width),
)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
