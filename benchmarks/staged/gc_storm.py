# labels: name::gc_storm author::mlprof task::benchmark
"""
A linear layer whose forward also allocates cyclic garbage: Python's collector runs several
times per call and stops the loop (benchmarks/staged_causes.py's ``gc`` stage: the cause
record must name ``gc``).

Source: written for mlprof (issue 36's staged causes).
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)

(batch_size,) = parse(["batch_size"])

#: reference cycles made per call: 2000 lists, each holding itself (about three generation-0
#: collections per call; only the collector frees them)
CYCLES = 2000


class GcStorm(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(10, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(CYCLES):
            a: list = []
            a.append(a)
        return self.linear(x)


model = GcStorm()
model.eval()
inputs = {"x": torch.rand(batch_size, 10)}

with torch.no_grad():
    model(**inputs)
