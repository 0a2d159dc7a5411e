# labels: name::gcn author::mlprof task::graph family::gcn kind::node_classification
"""
A graph convolutional network (Kipf and Welling, 2017): two GCN layers (in_channels ->
out_channels -> 7 classes, ReLU) on dense, symmetrically normalized adjacency matrices; node
classification.

The inputs are a batch of random graphs of 2708 nodes (Cora's size): node features `x` (batch,
nodes, in_channels) and a dense 0/1 adjacency matrix `adjacency` (batch, nodes, nodes),
symmetric, about 5 neighbours per node. Written for mlprof in plain torch (no torch_geometric).

Source: https://arxiv.org/abs/1609.02907
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


def normalize(adjacency):
    """D^-1/2 (A + I) D^-1/2 of a batch of dense adjacency matrices (Kipf and Welling)."""
    a = adjacency + torch.eye(adjacency.shape[-1], dtype=adjacency.dtype)
    d = a.sum(-1).rsqrt()
    return d.unsqueeze(-1) * a * d.unsqueeze(-2)


class GCN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, num_classes):
        super().__init__()
        self.conv1 = torch.nn.Linear(in_channels, hidden_channels)
        self.conv2 = torch.nn.Linear(hidden_channels, num_classes)

    def forward(self, x, adjacency):
        a = normalize(adjacency)
        h = torch.relu(a @ self.conv1(x))
        return a @ self.conv2(h)


# parameters (TurnkeyML's standard names): python gcn.py --batch_size 8
batch_size, in_channels, out_channels = parse(["batch_size", "in_channels", "out_channels"])

# model and inputs
num_nodes, num_classes = 2708, 7  # Cora's size
model = GCN(in_channels, out_channels, num_classes)
model.eval()
adjacency = (torch.rand(batch_size, num_nodes, num_nodes) < 0.002).float()  # ~5 neighbours
adjacency = ((adjacency + adjacency.transpose(1, 2)) > 0).float()  # undirected
inputs = {"x": torch.rand(batch_size, num_nodes, in_channels), "adjacency": adjacency}

# call the model
with torch.no_grad():
    model(**inputs)
