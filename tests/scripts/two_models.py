# labels: name::two_models author::mlprof-tests task::test,multi
"""Two different models, one called twice."""
import torch

from mlprof.parser import parse

torch.manual_seed(0)
batch_size, = parse(["batch_size"])
mlp = torch.nn.Sequential(torch.nn.Linear(10, 20), torch.nn.ReLU(), torch.nn.Linear(20, 5))
conv = torch.nn.Conv2d(3, 4, kernel_size=3)
with torch.no_grad():
    mlp(torch.rand(batch_size, 10))
    conv(torch.rand(batch_size, 3, 8, 8))
    mlp(torch.rand(batch_size, 10))
