# labels: name::coat_tiny author::timm task::computer_vision family::coat kind::classification
"""
`coat_tiny` from timm (family `coat`: timm/models/coat.py), random weights, 5,498,540
parameters.

The model is built for the input size (img_size=(height, width)): its position embeddings (or
attention windows) are tied to the image size, so height and width must be multiples of its
patch size (or window size).

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/coat.py
"""
import timm
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python coat_tiny.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = timm.create_model(
    "coat_tiny",
    pretrained=False,
    in_chans=num_channels,
    img_size=(height, width),
)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
