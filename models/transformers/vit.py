# labels: name::vit author::huggingface task::computer_vision
"""
ViT base (patch 16): transformers.ViTModel built from ViTConfig (the google/vit-base-patch16-224
sizes: 12 layers, hidden size 768, 12 heads, 16x16 patches), random weights. The model is built
for the input size (image_size=(height, width), num_channels); height and width must be
multiples of 16 (default 224x224).

Source: https://huggingface.co/docs/transformers/model_doc/vit
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python vit.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
config = transformers.ViTConfig(image_size=(height, width), num_channels=num_channels)
model = transformers.ViTModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
