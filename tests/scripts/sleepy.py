# labels: name::sleepy author::mlprof-tests task::test
"""A test model of known service time: a Linear layer, then a sleep of ``SLEEP_MS`` (2 ms).

Why: the server scenario's queueing is checked against the M/D/1 formula (issue 25), which
needs a service time that does not depend on the input or on how busy the machine is: a call
that sleeps waits, it does not compete for a core.
"""
import time

import torch

from mlprof.parser import parse

#: every call sleeps this long (ms)
SLEEP_MS = 2.0


class Sleepy(torch.nn.Module):
    """``Linear(10, 5)``, then a sleep of ``SLEEP_MS``."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(10, 5)

    def forward(self, input: torch.Tensor) -> torch.Tensor:  # noqa: A002 (the input's name)
        out = self.linear(input)
        time.sleep(SLEEP_MS / 1000)
        return out


torch.manual_seed(0)
batch_size, = parse(["batch_size"])
model = Sleepy().eval()
inputs = {"input": torch.rand(batch_size, 10)}
with torch.no_grad():
    model(**inputs)
