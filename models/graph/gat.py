# labels: name::gat author::mlprof task::graph family::gat kind::node_classification
"""
A graph attention network (Velickovic et al., 2018): a GAT layer with 8 heads of 8 features
(ELU, heads concatenated), then a 1-head GAT layer to 7 classes; attention is masked by the
dense adjacency matrix (with self loops).

The inputs are a batch of random graphs of 2708 nodes (Cora's size): node features `x` (batch,
nodes, in_channels) and a dense 0/1 adjacency matrix `adjacency` (batch, nodes, nodes),
symmetric, about 5 neighbours per node. Written for mlprof in plain torch (no torch_geometric).

Source: https://arxiv.org/abs/1710.10903
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class GATLayer(torch.nn.Module):
    def __init__(self, in_features, out_features, heads):
        super().__init__()
        self.heads, self.out_features = heads, out_features
        self.linear = torch.nn.Linear(in_features, heads * out_features, bias=False)
        self.att_src = torch.nn.Parameter(torch.randn(heads, out_features) * 0.1)
        self.att_dst = torch.nn.Parameter(torch.randn(heads, out_features) * 0.1)

    def forward(self, x, adjacency):
        b, n, _ = x.shape
        h = self.linear(x).view(b, n, self.heads, self.out_features)  # b n h f
        src = (h * self.att_src).sum(-1).transpose(1, 2)  # b h n
        dst = (h * self.att_dst).sum(-1).transpose(1, 2)
        scores = torch.nn.functional.leaky_relu(dst.unsqueeze(-1) + src.unsqueeze(-2), 0.2)
        mask = adjacency + torch.eye(n, dtype=adjacency.dtype)
        scores = scores.masked_fill(mask.unsqueeze(1) == 0, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ h.transpose(1, 2)  # b h n f
        return out.transpose(1, 2)  # b n h f


class GAT(torch.nn.Module):
    def __init__(self, in_channels, num_classes, hidden=8, heads=8):
        super().__init__()
        self.layer1 = GATLayer(in_channels, hidden, heads)
        self.layer2 = GATLayer(hidden * heads, num_classes, 1)

    def forward(self, x, adjacency):
        h = torch.nn.functional.elu(self.layer1(x, adjacency).flatten(2))
        return self.layer2(h, adjacency).mean(2)


# parameters (TurnkeyML's standard names): python gat.py --batch_size 8
batch_size, in_channels = parse(["batch_size", "in_channels"])

# model and inputs
num_nodes, num_classes = 2708, 7  # Cora's size
model = GAT(in_channels, num_classes)
model.eval()
adjacency = (torch.rand(batch_size, num_nodes, num_nodes) < 0.002).float()  # ~5 neighbours
adjacency = ((adjacency + adjacency.transpose(1, 2)) > 0).float()  # undirected
inputs = {"x": torch.rand(batch_size, num_nodes, in_channels), "adjacency": adjacency}

# call the model
with torch.no_grad():
    model(**inputs)
