# labels: name::multi_input author::mlprof task::test
"""
A model with two inputs of different shapes: an image (batch, channels, height, width) goes
through a small convolution and global pooling, a feature vector (batch, 10) through a linear
layer; both are concatenated and classified into 4 classes. forward(image, features).

Source: written for mlprof.
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class TwoInputNet(torch.nn.Module):
    def __init__(self, in_channels=3, num_features=10, num_classes=4):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, 8, kernel_size=3, stride=2, padding=1)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.dense = torch.nn.Linear(num_features, 8)
        self.head = torch.nn.Linear(16, num_classes)

    def forward(self, image, features):
        a = torch.flatten(self.pool(torch.relu(self.conv(image))), 1)
        b = torch.relu(self.dense(features))
        return self.head(torch.cat([a, b], dim=1))


# parameters (TurnkeyML's standard names): python multi_input.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# model and inputs
num_features = 10
model = TwoInputNet(in_channels=num_channels, num_features=num_features)
model.eval()
inputs = {
    "image": torch.rand(batch_size, num_channels, height, width),
    "features": torch.rand(batch_size, num_features),
}

# call the model
with torch.no_grad():
    model(**inputs)
