# labels: name::appnp author::mlprof task::graph family::appnp kind::node_classification
"""
APPNP (Klicpera et al., 2019): a 2-layer MLP (hidden size 64) predicts per node, then k steps of
personalized-PageRank propagation (teleport probability 0.1) over the dense, normalized
adjacency matrix; k is TurnkeyML's parameter (default 8).

The inputs are a batch of random graphs of 2708 nodes (Cora's size): node features `x` (batch,
nodes, in_channels) and a dense 0/1 adjacency matrix `adjacency` (batch, nodes, nodes),
symmetric, about 5 neighbours per node. Written for mlprof in plain torch (no torch_geometric).

Source: https://arxiv.org/abs/1810.05997
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


def normalize(adjacency):
    """D^-1/2 (A + I) D^-1/2 of a batch of dense adjacency matrices (Kipf and Welling)."""
    a = adjacency + torch.eye(adjacency.shape[-1], dtype=adjacency.dtype)
    d = a.sum(-1).rsqrt()
    return d.unsqueeze(-1) * a * d.unsqueeze(-2)


class APPNP(torch.nn.Module):
    def __init__(self, in_channels, num_classes, k, teleport=0.1, hidden=64):
        super().__init__()
        self.k, self.teleport = k, teleport
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(in_channels, hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, num_classes),
        )

    def forward(self, x, adjacency):
        a = normalize(adjacency)
        h0 = self.mlp(x)
        h = h0
        for _ in range(self.k):
            h = (1 - self.teleport) * (a @ h) + self.teleport * h0
        return h


# parameters (TurnkeyML's standard names): python appnp.py --batch_size 8
batch_size, in_channels, k = parse(["batch_size", "in_channels", "k"])

# model and inputs
num_nodes, num_classes = 2708, 7  # Cora's size
model = APPNP(in_channels, num_classes, k)
model.eval()
adjacency = (torch.rand(batch_size, num_nodes, num_nodes) < 0.002).float()  # ~5 neighbours
adjacency = ((adjacency + adjacency.transpose(1, 2)) > 0).float()  # undirected
inputs = {"x": torch.rand(batch_size, num_nodes, in_channels), "adjacency": adjacency}

# call the model
with torch.no_grad():
    model(**inputs)
