# labels: name::ecaresnet26t author::timm task::computer_vision family::resnet kind::classification
"""
`ecaresnet26t` from timm (family `resnet`: timm/models/resnet.py), random weights, 16,011,916
parameters.

timm's default input size for this model is 3x256x256 (its pretrained_cfg); the script uses
--height/--width (default 224x224), pass --height 256 --width 256 for the native size.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/resnet.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python ecaresnet26t.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("ecaresnet26t", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
