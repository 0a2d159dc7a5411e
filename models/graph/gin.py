# labels: name::gin author::mlprof task::graph family::gin kind::graph_classification
"""
A graph isomorphism network (Xu et al., 2019): num_layers GIN layers (sum aggregation, (1 + eps)
self weight, 2-layer MLP with ReLU, hidden size 64), sum readout of every layer and a linear
classifier: graph classification, one prediction per graph (7 classes); dense adjacency.

The inputs are a batch of random graphs of 2708 nodes (Cora's size): node features `x` (batch,
nodes, in_channels) and a dense 0/1 adjacency matrix `adjacency` (batch, nodes, nodes),
symmetric, about 5 neighbours per node. Written for mlprof in plain torch (no torch_geometric).

Source: https://arxiv.org/abs/1810.00826
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class GINLayer(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.eps = torch.nn.Parameter(torch.zeros(1))
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(in_features, out_features),
            torch.nn.ReLU(),
            torch.nn.Linear(out_features, out_features),
            torch.nn.ReLU(),
        )

    def forward(self, x, adjacency):
        return self.mlp((1 + self.eps) * x + adjacency @ x)


class GIN(torch.nn.Module):
    def __init__(self, in_channels, num_classes, num_layers, hidden=64):
        super().__init__()
        sizes = [in_channels] + [hidden] * num_layers
        self.layers = torch.nn.ModuleList(
            GINLayer(a, b) for a, b in zip(sizes[:-1], sizes[1:], strict=True)
        )
        self.classifier = torch.nn.Linear(hidden * num_layers, num_classes)

    def forward(self, x, adjacency):
        readouts = []
        for layer in self.layers:
            x = layer(x, adjacency)
            readouts.append(x.sum(1))
        return self.classifier(torch.cat(readouts, dim=-1))


# parameters (TurnkeyML's standard names): python gin.py --batch_size 8
batch_size, in_channels, num_layers = parse(["batch_size", "in_channels", "num_layers"])

# model and inputs
num_nodes, num_classes = 2708, 7  # Cora's size
model = GIN(in_channels, num_classes, num_layers)
model.eval()
adjacency = (torch.rand(batch_size, num_nodes, num_nodes) < 0.002).float()  # ~5 neighbours
adjacency = ((adjacency + adjacency.transpose(1, 2)) > 0).float()  # undirected
inputs = {"x": torch.rand(batch_size, num_nodes, in_channels), "adjacency": adjacency}

# call the model
with torch.no_grad():
    model(**inputs)
