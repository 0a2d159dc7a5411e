# labels: name::sgc author::mlprof task::graph family::sgc kind::node_classification
"""
Simplified graph convolution (Wu et al., 2019): the features are propagated k times over the
dense, normalized adjacency matrix (no nonlinearity), then one linear classifier (7 classes); k
is TurnkeyML's parameter (default 8).

The inputs are a batch of random graphs of 2708 nodes (Cora's size): node features `x` (batch,
nodes, in_channels) and a dense 0/1 adjacency matrix `adjacency` (batch, nodes, nodes),
symmetric, about 5 neighbours per node. Written for mlprof in plain torch (no torch_geometric).

Source: https://arxiv.org/abs/1902.07153
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


def normalize(adjacency):
    """D^-1/2 (A + I) D^-1/2 of a batch of dense adjacency matrices (Kipf and Welling)."""
    a = adjacency + torch.eye(adjacency.shape[-1], dtype=adjacency.dtype)
    d = a.sum(-1).rsqrt()
    return d.unsqueeze(-1) * a * d.unsqueeze(-2)


class SGC(torch.nn.Module):
    def __init__(self, in_channels, num_classes, k):
        super().__init__()
        self.k = k
        self.linear = torch.nn.Linear(in_channels, num_classes)

    def forward(self, x, adjacency):
        a = normalize(adjacency)
        h = x @ self.linear.weight.t()  # A^k X W == A^k (X W): project first, far cheaper
        for _ in range(self.k):
            h = a @ h
        return h + self.linear.bias


# parameters (TurnkeyML's standard names): python sgc.py --batch_size 8
batch_size, in_channels, k = parse(["batch_size", "in_channels", "k"])

# model and inputs
num_nodes, num_classes = 2708, 7  # Cora's size
model = SGC(in_channels, num_classes, k)
model.eval()
adjacency = (torch.rand(batch_size, num_nodes, num_nodes) < 0.002).float()  # ~5 neighbours
adjacency = ((adjacency + adjacency.transpose(1, 2)) > 0).float()  # undirected
inputs = {"x": torch.rand(batch_size, num_nodes, in_channels), "adjacency": adjacency}

# call the model
with torch.no_grad():
    model(**inputs)
