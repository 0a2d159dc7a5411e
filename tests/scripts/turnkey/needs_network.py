# labels: test_group::turnkey name::needs_network author::mlprof task::test
"""
Fetches something from the network before building its model, as a script with pretrained
weights does.

Source: written for mlprof's tests (tests/test_turnkey.py)
"""
from turnkeyml.parser import parse
import urllib.request
import torch

torch.manual_seed(0)

# Parsing command-line arguments
(batch_size,) = parse(["batch_size"])

# "pretrained weights"
urllib.request.urlopen("http://example.com", timeout=60).read()

# Model and input configurations
model = torch.nn.Linear(10, 5)
inputs = {"input": torch.rand(batch_size, 10)}

# Call model
model(**inputs)
