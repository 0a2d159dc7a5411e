# labels: name::no_grad author::mlprof-tests task::test
"""Inputs made and the model called under torch.no_grad()."""
import torch

from mlprof.parser import parse

torch.manual_seed(0)
batch_size, = parse(["batch_size"])
model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                            torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 5)).eval()
with torch.no_grad():
    x = torch.rand(batch_size, 3, 8, 8)
    model(x)
