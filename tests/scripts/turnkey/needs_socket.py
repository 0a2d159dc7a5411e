# labels: test_group::turnkey name::needs_socket author::mlprof task::test
"""
Opens a TCP connection to another machine before building its model.

Source: written for mlprof's tests (tests/test_turnkey.py)
"""
from turnkeyml.parser import parse
import socket
import torch

torch.manual_seed(0)

# Parsing command-line arguments
(batch_size,) = parse(["batch_size"])

socket.create_connection(("example.com", 80), timeout=60).close()

# Model and input configurations
model = torch.nn.Linear(10, 5)
inputs = {"input": torch.rand(batch_size, 10)}

# Call model
model(**inputs)
