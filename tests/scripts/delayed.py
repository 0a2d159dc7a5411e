# labels: name::delayed author::mlprof-tests task::test
"""A test model with a known, load-independent speed: a Linear layer that sleeps every call.

Why: a nightly test needs a regression that does not depend on how busy the machine is (issue
23). A call that *sleeps* takes the same wall time on a quiet machine and beside busy
neighbours (it waits, it does not compete for a core), so every call of this model sleeps
``BASE_MS`` (20 ms): each night's median stays near 20 ms on a quiet or a busy machine
(measured on this 2-core machine at a load average of 6: a 20 ms sleep took a median of
20.1 ms, p84 24 ms; a 50 ms one 51.9 and 55.0 ms; a CPU-bound call of 16-23 ms took 85-89 ms
beside three busy loops, as the nightly test measured when it made its regression that way).

The test hook: from the night on which a test writes the file ``extra_delay_ms`` next to this
script (a number of milliseconds), each call sleeps that much longer as well: a known slowdown
from that night on. The file is read when the script runs, that is in every measurement child
(discovery, capture); it is no part of the model's identity (that is the script's content and
the module's architecture, and the delay is a plain attribute, not in the module's repr), so the
same experiment is measured slower from that night on, which is what a regression is.

Only tests use it: a test copies this script into a folder of its own (the copy has the same
content, so the same identity) and writes the file there; mlprof itself knows no such file.
"""
import os
import time

import torch

from mlprof.parser import parse

#: every call sleeps this long (ms)
BASE_MS = 20.0
#: the test's switch, next to the script: extra milliseconds per call from the night it appears
EXTRA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "extra_delay_ms")


def extra_ms() -> float:
    """The extra delay the test asked for (0 without the file)."""
    try:
        with open(EXTRA_FILE) as f:
            return float(f.read())
    except FileNotFoundError:
        return 0.0


class Delayed(torch.nn.Module):
    """``Linear(10, 5)``, then a sleep of ``delay_s`` seconds."""

    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(10, 5)
        self.delay_s = delay_s

    def forward(self, input: torch.Tensor) -> torch.Tensor:  # noqa: A002 (the input's name)
        out = self.linear(input)
        time.sleep(self.delay_s)
        return out


torch.manual_seed(0)
batch_size, = parse(["batch_size"])
model = Delayed((BASE_MS + extra_ms()) / 1000).eval()
inputs = {"input": torch.rand(batch_size, 10)}
with torch.no_grad():
    model(**inputs)
