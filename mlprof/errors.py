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
    """A measurement child process crashed, was killed or timed out.

    ``status`` is ``"failed"`` (the child raised or crashed) or ``"timeout"``.
    """

    def __init__(self, message: str, file: str | os.PathLike | None = None,
                 field: str | None = None, status: str = "failed") -> None:
        self.status = status
        super().__init__(message, file, field)

    def __reduce__(self):
        return (type(self), (self.message, self.file, self.field, self.status))
