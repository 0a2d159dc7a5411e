# labels: name::leak author::mlprof-tests task::test
"""A model whose forward keeps allocating (64 MB per step, written so that it is resident) at
batch size >= 2, without end: it must be stopped by $MLP_MEMORY_LIMIT, not by the machine.
At the script's own batch size 1, discovery works."""
import torch

from mlprof.parser import parse

_kept = []


class Leak(torch.nn.Module):
    """Linear, but hoards memory for a batch of two or more."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 4)

    def forward(self, x):
        while x.shape[0] >= 2:
            _kept.append(torch.ones(16 * 2**20))  # 64 MB, every page touched
        return self.linear(x)


torch.manual_seed(0)
batch_size, = parse(["batch_size"])
model = Leak().eval()
inputs = {"x": torch.rand(batch_size, 16)}
with torch.no_grad():
    model(**inputs)
