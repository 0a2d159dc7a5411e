# labels: name::graphsage author::mlprof task::graph family::graphsage kind::node_classification
"""
GraphSAGE (Hamilton et al., 2017) with the mean aggregator: each of two layers combines a node's
features with the mean of its neighbours' (separate weights, ReLU, L2 normalization), hidden
size out_channels, 7 classes; dense adjacency.

The inputs are a batch of random graphs of 2708 nodes (Cora's size): node features `x` (batch,
nodes, in_channels) and a dense 0/1 adjacency matrix `adjacency` (batch, nodes, nodes),
symmetric, about 5 neighbours per node. Written for mlprof in plain torch (no torch_geometric).

Source: https://arxiv.org/abs/1706.02216
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class SAGELayer(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.self_linear = torch.nn.Linear(in_features, out_features)
        self.neighbour_linear = torch.nn.Linear(in_features, out_features, bias=False)

    def forward(self, x, adjacency):
        degree = adjacency.sum(-1, keepdim=True).clamp(min=1)
        return self.self_linear(x) + self.neighbour_linear(adjacency @ x / degree)


class GraphSAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, num_classes):
        super().__init__()
        self.layer1 = SAGELayer(in_channels, hidden_channels)
        self.layer2 = SAGELayer(hidden_channels, num_classes)

    def forward(self, x, adjacency):
        h = torch.nn.functional.normalize(torch.relu(self.layer1(x, adjacency)), dim=-1)
        return self.layer2(h, adjacency)


# parameters (TurnkeyML's standard names): python graphsage.py --batch_size 8
batch_size, in_channels, out_channels = parse(["batch_size", "in_channels", "out_channels"])

# model and inputs
num_nodes, num_classes = 2708, 7  # Cora's size
model = GraphSAGE(in_channels, out_channels, num_classes)
model.eval()
adjacency = (torch.rand(batch_size, num_nodes, num_nodes) < 0.002).float()  # ~5 neighbours
adjacency = ((adjacency + adjacency.transpose(1, 2)) > 0).float()  # undirected
inputs = {"x": torch.rand(batch_size, num_nodes, in_channels), "adjacency": adjacency}

# call the model
with torch.no_grad():
    model(**inputs)
