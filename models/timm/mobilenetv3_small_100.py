# labels: name::mobilenetv3_small_100 author::timm task::computer_vision
"""
MobileNetV3-Small (1.0x) from timm, random weights.

Source: https://huggingface.co/timm/mobilenetv3_small_100.lamb_in1k
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mobilenetv3_small_100.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model("mobilenetv3_small_100", pretrained=False, in_chans=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
