# labels: name::two_models author::mlprof task::test
"""
Two different models in one script: a small MLP on vectors and a small convolutional network
on images, each built and called once. mlprof should discover and benchmark both.

Source: written for mlprof (after TurnkeyML's models/selftest/twolayer.py).
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class SmallMLP(torch.nn.Module):
    def __init__(self, in_features=32, hidden=64, out_features=4):
        super().__init__()
        self.fc1 = torch.nn.Linear(in_features, hidden)
        self.fc2 = torch.nn.Linear(hidden, out_features)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class SmallConvNet(torch.nn.Module):
    def __init__(self, in_channels=3, num_classes=4):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, 8, kernel_size=3, stride=2, padding=1)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(8, num_classes)

    def forward(self, images):
        return self.fc(torch.flatten(self.pool(torch.relu(self.conv(images))), 1))


# parameters (TurnkeyML's standard names): python two_models.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

# models and inputs
mlp = SmallMLP()
mlp.eval()
mlp_inputs = {"x": torch.rand(batch_size, 32)}

convnet = SmallConvNet(in_channels=num_channels)
convnet.eval()
convnet_inputs = {"images": torch.rand(batch_size, num_channels, height, width)}

# call the models
with torch.no_grad():
    mlp(**mlp_inputs)
    convnet(**convnet_inputs)
