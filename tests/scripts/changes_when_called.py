"""A model that changes itself on its first call, as transformers' BigBird switches its
attention type for short inputs (its repr shows it): discovery and capture must agree."""
import torch


class Switching(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mode = "sparse"
        self.linear = torch.nn.Linear(4, 2)

    def extra_repr(self):
        return f"mode={self.mode}"

    def forward(self, x):
        self.mode = "full"
        return self.linear(x)


with torch.no_grad():
    Switching().eval()(torch.rand(1, 4))
