# labels: name::mobilevit author::huggingface task::computer_vision family::mobilevit kind::vision
"""
transformers.MobileViTModel (vision model) built from transformers.MobileViTConfig with its
default configuration, random weights, 4,937,632 parameters.

The model is built for the input size (image_size=height): square images; the config's default
image size is 256x256.

Source: https://huggingface.co/docs/transformers/model_doc/mobilevit
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mobilevit.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])
if height != width:
    raise ValueError(f"mobilevit is built for square images (image_size=height), got "
                     f"{height}x{width}")

# model and inputs
config = transformers.MobileViTConfig(image_size=height, num_channels=num_channels)
model = transformers.MobileViTModel(config)
model.eval()
inputs = {"pixel_values": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
