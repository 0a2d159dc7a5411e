# labels: name::inference_mode_decorated author::mlprof-tests task::test
"""Everything inside a function decorated with @torch.inference_mode(): tied weights, a buffer
and a plain tensor attribute created in that mode, and a tensor the model creates in its first
forward() and keeps (a cache)."""
import torch

from mlprof.parser import parse


class Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.out = torch.nn.Linear(8, 8)
        self.out.weight = self.proj.weight  # one tensor in two places
        self.register_buffer("shift", torch.full((8,), 0.1))
        self.scale = torch.tensor(0.5)  # neither parameter nor buffer
        self.table = None  # made by the first forward()

    def forward(self, x):
        if self.table is None:
            self.table = torch.linspace(0.5, 1.5, 8)
        return self.out(torch.relu(self.proj(x) + self.shift)) * self.scale * self.table


@torch.inference_mode()
def main():
    torch.manual_seed(0)
    batch_size, = parse(["batch_size"])
    model = Tied().eval()
    model(torch.rand(batch_size, 8))


main()
