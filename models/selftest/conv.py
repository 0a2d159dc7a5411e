# labels: name::conv author::mlprof task::test
"""
A small convolutional network (two 3x3 convolutions with ReLU and max pooling, global average
pooling, a linear classifier with 10 classes) on a batch of random images.

Source: written for mlprof.
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class ConvNet(torch.nn.Module):
    def __init__(self, in_channels=3, num_classes=10):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(in_channels, 8, kernel_size=3, padding=1),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(8, 16, kernel_size=3, padding=1),
            torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = torch.nn.Linear(16, num_classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


# parameters (TurnkeyML's standard names): python conv.py --batch_size 8 --height 64 --width 64
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
model = ConvNet(in_channels=num_channels)
model.eval()
inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

# call the model
with torch.no_grad():
    model(**inputs)
