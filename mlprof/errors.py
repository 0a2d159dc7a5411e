"""The one error type mlprof raises for bad input, with the file and field it concerns."""

from __future__ import annotations

import os


class MLProfError(Exception):
    """A user-facing error: one line naming the file and the field that is wrong.

    ``str(err)`` is ``"<file>: <field>: <message>"`` with the parts that are known.
    """

    def __init__(self, message: str, file: str | os.PathLike | None = None,
                 field: str | None = None) -> None:
        self.message = " ".join(str(message).split())  # always one line
        self.file = os.fspath(file) if file is not None else None
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [p for p in (self.file, self.field) if p]
        return ": ".join([*parts, self.message])

    def __reduce__(self):  # picklable across the measurement child process
        return (type(self), (self.message, self.file, self.field))


class MeasurementFailed(MLProfError):
    """A measurement child process crashed, was killed, ran out of memory or timed out.

    ``status`` is ``"failed"`` (the child raised or crashed), ``"timeout"`` (killed after
    ``$MLP_TIMEOUT``) or ``"oom"`` (killed above ``$MLP_MEMORY_LIMIT``, by the kernel's OOM
    killer, or an allocation failed), ``"needs-network"`` (a model script tried to reach the
    network, which mlprof blocks while it runs one) or ``"needs-package"`` (a model script
    imports a package that is not installed).
    """

    def __init__(self, message: str, file: str | os.PathLike | None = None,
                 field: str | None = None, status: str = "failed") -> None:
        self.status = status
        super().__init__(message, file, field)

    def __reduce__(self):
        return (type(self), (self.message, self.file, self.field, self.status))


class CorruptResult(MLProfError):
    """A result file in the store is damaged: ``file`` names it, the message says what is wrong
    (``"<file>: has 4050 rows, its provenance says 8040"``). Reports list it with status
    ``corrupt``; MeasureRuntime measures such a branch again."""


#: lower-case fragments of the messages of failed allocations (Python, C++, ONNX Runtime, torch)
_OOM_TEXT = ("bad_alloc", "bad allocation", "failed to allocate memory", "can't allocate memory",
             "cannot allocate memory", "out of memory")


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` reports a failed memory allocation (``MemoryError``, ``std::bad_alloc``,
    ONNX Runtime's "Failed to allocate memory", PyTorch's "can't allocate memory")."""
    if isinstance(exc, MemoryError):
        return True
    text = str(exc).lower()
    return any(t in text for t in _OOM_TEXT)


def out_of_memory_text(exc: BaseException, max_len: int = 300) -> str:
    """One line about a failed allocation: ``exc``'s message, cut to the part that says so."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if len(text) <= max_len:
        return text
    low = text.lower()
    at = min((i for i in (low.find(t) for t in _OOM_TEXT) if i >= 0), default=0)
    # "... Failed to allocate memory for requested buffer of size 1099511627776"
    return ("... " if at else "") + text[at:at + max_len]


#: what ``law run`` and ``mlprof`` print when Ctrl-C stops them (results are written
#: atomically, and a measurement child ends with its run: see :mod:`mlprof.measure.isolate`)
INTERRUPTED = ("mlprof: interrupted (Ctrl-C); finished results are kept, nothing is "
               "half-written: the same command resumes")
#: ``mlprof``'s exit code after Ctrl-C (128 + SIGINT, as a shell reports it)
EXIT_INTERRUPTED = 130
