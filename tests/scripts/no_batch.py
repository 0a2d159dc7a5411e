"""A model whose only input has no batch dimension (a fixed-size vector)."""
import torch

torch.manual_seed(0)
model = torch.nn.Linear(16, 4)
model(torch.rand(16))
