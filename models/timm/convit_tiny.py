# labels: name::convit_tiny author::timm task::computer_vision family::convit kind::classification
"""
`convit_tiny` from timm (family `convit`: timm/models/convit.py), random weights, 5,710,512
parameters.

The model is built for the input size (img_size=(height, width)): its position embeddings (or
attention windows) are tied to the image size, so height and width must be multiples of its
patch size (or window size).

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/convit.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python convit_tiny.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model(
    "convit_tiny",
    pretrained=False,
    in_chans=num_channels,
    img_size=(height, width),
)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
