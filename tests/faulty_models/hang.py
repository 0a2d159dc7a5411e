# labels: name::hang author::mlprof-tests task::test
"""A model whose forward never returns at batch size >= 2 (at the script's own batch size 1,
discovery works): a measurement of it must time out after $MLP_TIMEOUT seconds."""
import time

import torch

from mlprof.parser import parse


class Hang(torch.nn.Module):
    """Linear, but waits forever for a batch of two or more."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 4)

    def forward(self, x):
        while x.shape[0] >= 2:
            time.sleep(1)
        return self.linear(x)


torch.manual_seed(0)
batch_size, = parse(["batch_size"])
model = Hang().eval()
inputs = {"x": torch.rand(batch_size, 16)}
with torch.no_grad():
    model(**inputs)
