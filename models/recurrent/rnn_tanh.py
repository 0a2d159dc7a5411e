# labels: name::rnn_tanh author::mlprof task::time_series family::rnn kind::recurrent
"""
An Elman recurrent network: a 2-layer torch.nn.RNN (tanh, 64 hidden units) over a sequence of
32-feature vectors (max_seq_length steps), a linear layer with 4 outputs at every step.

Written for mlprof in plain torch, random weights.

Source: written for mlprof; https://pytorch.org/docs/stable/nn.html#recurrent-layers
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class ElmanRNN(torch.nn.Module):
    def __init__(self, input_size=32, hidden_size=64, num_outputs=4):
        super().__init__()
        self.rnn = torch.nn.RNN(input_size, hidden_size, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(hidden_size, num_outputs)

    def forward(self, x):
        output, _ = self.rnn(x)
        return self.head(output)


# parameters (TurnkeyML's standard names): python rnn_tanh.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
input_size = 32
model = ElmanRNN(input_size)
model.eval()
inputs = {"x": torch.randn(batch_size, max_seq_length, input_size)}

# call the model
with torch.no_grad():
    model(**inputs)
