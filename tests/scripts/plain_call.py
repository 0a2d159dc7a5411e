# labels: name::plain_call author::mlprof-tests task::test
"""The model called plainly: no torch.no_grad(), no torch.inference_mode(), not even eval()."""
import torch

from mlprof.parser import parse

torch.manual_seed(0)
batch_size, = parse(["batch_size"])
model = torch.nn.Sequential(torch.nn.Linear(10, 20), torch.nn.Tanh(), torch.nn.Linear(20, 5))
model(torch.rand(batch_size, 10))
