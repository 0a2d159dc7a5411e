# labels: name::segfault author::mlprof-tests task::test
"""A model whose forward crashes the process with SIGSEGV at batch size >= 2 (as a broken C
extension would); at the script's own batch size 1, discovery works."""
import ctypes

import torch

from mlprof.parser import parse


class Segfault(torch.nn.Module):
    """Linear, but reads address 0 for a batch of two or more."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 4)

    def forward(self, x):
        if x.shape[0] >= 2:
            ctypes.string_at(0)
        return self.linear(x)


torch.manual_seed(0)
batch_size, = parse(["batch_size"])
model = Segfault().eval()
inputs = {"x": torch.rand(batch_size, 16)}
with torch.no_grad():
    model(**inputs)
