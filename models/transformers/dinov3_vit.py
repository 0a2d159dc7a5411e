# labels: name::dinov3_vit author::huggingface task::computer_vision family::dinov3_vit kind::vision
"""
transformers.DINOv3ViTModel (vision model) built from transformers.DINOv3ViTConfig with its
default configuration, random weights, 21,595,008 parameters.

The model is built for the input size (image_size=height): square images.

Source: https://huggingface.co/docs/transformers/model_doc/dinov3_vit
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python dinov3_vit.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width:
    raise ValueError(f"dinov3_vit is built for square images (image_size=height), got "
                     f"{height}x{width}")

# model and inputs
config = transformers.DINOv3ViTConfig(image_size=height, num_channels=num_channels)
model = transformers.DINOv3ViTModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
