# labels: test_group::turnkey name::tiny_mlp author::mlprof task::test
"""
A tiny MLP in TurnkeyML's script template: `from turnkeyml.parser import parse`, no mlprof import.

Source: written for mlprof's tests (tests/test_turnkey.py)
"""
from turnkeyml.parser import parse
import torch

torch.manual_seed(0)

# Parsing command-line arguments
batch_size, max_seq_length, pretrained = parse(["batch_size", "max_seq_length", "pretrained"])
assert pretrained is False

# Model and input configurations
model = torch.nn.Sequential(
    torch.nn.Linear(max_seq_length, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)
)
inputs = {"input": torch.rand(batch_size, max_seq_length)}

# Call model
model(**inputs)
