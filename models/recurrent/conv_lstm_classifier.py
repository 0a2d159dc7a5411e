# labels: name::conv_lstm_classifier author::mlprof task::time_series family::lstm kind::recurrent
"""
A CNN-LSTM sequence classifier (activity recognition style): two 1-d convolutions (64 channels,
kernel 5, ReLU) over max_seq_length steps of 9 sensor channels, a bidirectional torch.nn.LSTM (2
x 64 units) and a linear layer with 6 classes on the mean over time.

Written for mlprof in plain torch, random weights.

Source: written for mlprof; https://pytorch.org/docs/stable/nn.html#recurrent-layers
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class ConvLSTMClassifier(torch.nn.Module):
    def __init__(self, num_channels=9, num_classes=6):
        super().__init__()
        self.conv = torch.nn.Sequential(
            torch.nn.Conv1d(num_channels, 64, kernel_size=5, padding=2),
            torch.nn.ReLU(),
            torch.nn.Conv1d(64, 64, kernel_size=5, padding=2),
            torch.nn.ReLU(),
        )
        self.lstm = torch.nn.LSTM(64, 64, bidirectional=True, batch_first=True)
        self.classifier = torch.nn.Linear(128, num_classes)

    def forward(self, x):
        h = self.conv(x.transpose(1, 2)).transpose(1, 2)
        output, _ = self.lstm(h)
        return self.classifier(output.mean(1))


# parameters (TurnkeyML's standard names): python conv_lstm_classifier.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
sensor_channels = 9
model = ConvLSTMClassifier(sensor_channels)
model.eval()
inputs = {"x": torch.randn(batch_size, max_seq_length, sensor_channels)}

# call the model
with torch.no_grad():
    model(**inputs)
