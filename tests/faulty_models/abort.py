# labels: name::abort author::mlprof-tests task::test
"""A model whose forward aborts the process (SIGABRT, as a failed C++ assertion would) at batch
size >= 2; at the script's own batch size 1, discovery works."""
import os

import torch

from mlprof.parser import parse


class Abort(torch.nn.Module):
    """Linear, but aborts for a batch of two or more."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 4)

    def forward(self, x):
        if x.shape[0] >= 2:
            os.abort()
        return self.linear(x)


torch.manual_seed(0)
batch_size, = parse(["batch_size"])
model = Abort().eval()
inputs = {"x": torch.rand(batch_size, 16)}
with torch.no_grad():
    model(**inputs)
