# labels: name::inference_mode author::mlprof task::test
"""
A small CNN with batch normalization (a 3x3 convolution, BatchNorm, ReLU, global average
pooling, a linear classifier with 10 classes), built, fed and called under
torch.inference_mode(), the idiom PyTorch's documentation recommends for inference: its
parameters, buffers and inputs are all inference tensors.

Source: written for mlprof.
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class ConvBN(torch.nn.Module):
    def __init__(self, in_channels=3, num_classes=10):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(in_channels, 8, kernel_size=3, padding=1, bias=False),
            torch.nn.BatchNorm2d(8),
            torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = torch.nn.Linear(8, num_classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


# parameters (TurnkeyML's standard names): python inference_mode.py --batch_size 8
batch_size, num_channels, height, width = parse(["batch_size", "num_channels", "height", "width"])

with torch.inference_mode():
    # model and inputs, made in inference mode
    model = ConvBN(in_channels=num_channels)
    model.eval()
    inputs = {"x": torch.rand(batch_size, num_channels, height, width)}

    # call the model
    model(**inputs)
