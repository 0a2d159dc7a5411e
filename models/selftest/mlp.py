# labels: name::mlp author::mlprof task::test
"""
A three-layer perceptron (64 -> 128 -> 128 -> 10, ReLU) on a batch of random vectors.

Source: written for mlprof.
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class MLP(torch.nn.Module):
    def __init__(self, in_features=64, hidden=128, out_features=10):
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(in_features, hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, out_features),
        )

    def forward(self, x):
        return self.layers(x)


# parameters (TurnkeyML's standard names): python mlp.py --batch_size 8
(batch_size,) = parse(["batch_size"])

# model and inputs
model = MLP()
model.eval()
inputs = {"x": torch.rand(batch_size, 64)}

# call the model
with torch.no_grad():
    model(**inputs)
