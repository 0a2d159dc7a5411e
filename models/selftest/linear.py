# labels: name::linear author::mlprof task::test
"""
A single linear layer, torch.nn.Linear(10, 5), called on a batch of random vectors.

Source: written for mlprof (after TurnkeyML's models/selftest/linear.py).
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python linear.py --batch_size 8
(batch_size,) = parse(["batch_size"])

# model and inputs
input_features, output_features = 10, 5
model = torch.nn.Linear(input_features, output_features)
model.eval()
inputs = {"input": torch.rand(batch_size, input_features)}

# call the model
with torch.no_grad():
    model(**inputs)
