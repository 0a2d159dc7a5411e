# labels: name::fault_storm author::mlprof task::benchmark
"""
A linear layer whose forward also reads pages of a file after dropping them from the page cache
(``posix_fadvise(DONTNEED)``): every page touched is a major page fault, read back from disk
(benchmarks/staged_causes.py's ``faults-model`` stage: the cause record must name ``memory``).

The file (16 MB, in ``$MLP_STAGED_DIR`` or /var/tmp: not tmpfs, whose pages never leave memory)
is unlinked as soon as it is open, so nothing is left behind.

Source: written for mlprof (issue 36's staged causes).
"""
import mmap
import os
import tempfile

import torch

from mlprof.parser import parse

torch.manual_seed(0)

(batch_size,) = parse(["batch_size"])

SIZE = 16 << 20
#: pages read back per call (one major fault each)
PAGES = 16

_file = tempfile.TemporaryFile(dir=os.environ.get("MLP_STAGED_DIR", "/var/tmp"))
_file.write(os.urandom(SIZE))
_file.flush()
os.fsync(_file.fileno())
_map = mmap.mmap(_file.fileno(), SIZE, prot=mmap.PROT_READ)
_map.madvise(mmap.MADV_RANDOM)  # no read-ahead: one fault per page


class FaultStorm(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(10, 5)
        self.next = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # unmapped first: POSIX_FADV_DONTNEED leaves the pages a process maps (without it, the
        # file faults once per page and then never again)
        _map.madvise(mmap.MADV_DONTNEED)
        os.posix_fadvise(_file.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        for _ in range(PAGES):
            _map[self.next]  # noqa: B018  (the read is the point)
            self.next = (self.next + 4096 * 97) % SIZE
        return self.linear(x)


model = FaultStorm()
model.eval()
inputs = {"x": torch.rand(batch_size, 10)}

with torch.no_grad():
    model(**inputs)
