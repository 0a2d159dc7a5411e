# labels: name::lstm_forecaster author::mlprof task::time_series family::lstm kind::recurrent
"""
A multivariate time-series forecaster: a 3-layer torch.nn.LSTM (128 hidden units) over
max_seq_length steps of 8 variables, a linear layer predicting the next 24 steps of all 8
variables from the last hidden state.

Written for mlprof in plain torch, random weights.

Source: written for mlprof; https://pytorch.org/docs/stable/nn.html#recurrent-layers
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class LSTMForecaster(torch.nn.Module):
    def __init__(self, num_variables=8, hidden_size=128, horizon=24):
        super().__init__()
        self.num_variables, self.horizon = num_variables, horizon
        self.lstm = torch.nn.LSTM(num_variables, hidden_size, num_layers=3, batch_first=True)
        self.head = torch.nn.Linear(hidden_size, horizon * num_variables)

    def forward(self, x):
        output, _ = self.lstm(x)
        return self.head(output[:, -1]).view(-1, self.horizon, self.num_variables)


# parameters (TurnkeyML's standard names): python lstm_forecaster.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
num_variables = 8
model = LSTMForecaster(num_variables)
model.eval()
inputs = {"x": torch.randn(batch_size, max_seq_length, num_variables)}

# call the model
with torch.no_grad():
    model(**inputs)
