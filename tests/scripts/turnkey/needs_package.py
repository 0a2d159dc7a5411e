# labels: test_group::turnkey name::needs_package author::mlprof task::graph_neural_networks
"""
A graph neural network from PyTorch Geometric (not installed here).

Source: written for mlprof's tests (tests/test_turnkey.py)
"""
from turnkeyml.parser import parse
import torch
from torch_geometric.nn import GCN

torch.manual_seed(0)

# Parsing command-line arguments
in_channels, out_channels, num_layers = parse(["in_channels", "out_channels", "num_layers"])

# Model and input configurations
model = GCN(in_channels, 16, num_layers, out_channels)
x = torch.rand(4, in_channels)
edge_index = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]])

# Call model
model(x, edge_index)
