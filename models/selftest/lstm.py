# labels: name::lstm author::mlprof task::test
"""
A recurrent model: a 1-layer torch.nn.LSTM (16 input features, 32 hidden units, batch_first)
over a random sequence, then a linear layer with 4 outputs on the last time step.

Source: written for mlprof.
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class LSTMClassifier(torch.nn.Module):
    def __init__(self, input_size=16, hidden_size=32, num_classes=4):
        super().__init__()
        self.lstm = torch.nn.LSTM(input_size, hidden_size, batch_first=True)
        self.head = torch.nn.Linear(hidden_size, num_classes)

    def forward(self, x):
        output, _ = self.lstm(x)
        return self.head(output[:, -1])


# parameters (TurnkeyML's standard names): python lstm.py --batch_size 8 --max_seq_length 64
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
input_size = 16
model = LSTMClassifier(input_size=input_size)
model.eval()
inputs = {"x": torch.rand(batch_size, max_seq_length, input_size)}

# call the model
with torch.no_grad():
    model(**inputs)
