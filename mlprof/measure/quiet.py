"""What the measurement children print: their real errors, not their libraries' start-up logs.

Left to their defaults, each TensorFlow child prints its C++ start-up log (absl's ``All log
messages before absl::InitializeLog()``, ``cpu_feature_guard``, the XLA service and ``Compiled
cluster using XLA!``: 7 lines per tfaot child), each torch profile kineto's ``profiler_start`` /
``profiler_stop`` marks and ``gpuGetDeviceCount failed with code 35`` (an "error" that only says
this machine has no GPU, which mlprof's CPU profiles do not use), and torch.compile's first
compile ``No CUDA runtime is found, using CUDA_HOME=...`` (and the resource tracker its leaked
semaphores at the end). None of them is a problem; each comes back in every child.

So, unless ``MLP_VERBOSE`` is set, the measurement server (and a measurement in another
environment) starts with :data:`QUIET_ENV`, set *before* any library is imported in it (the
C++ loggers read their level once, at start-up), and a child that imports torch drops the one
known CUDA line (:func:`quiet_torch_logs`). A variable the user set is kept as it is. What stays:
TensorFlow's errors (level 2 hides INFO and WARNING only), every Python exception (a model that
fails is one line from mlprof), and everything the model itself prints. Nothing here changes a
computation: ``TF_ENABLE_ONEDNN_OPTS`` is left alone. Its notice ("oneDNN custom operations
are on") comes through absl before the log level applies, so a quiet worker's fd 2 runs
through :class:`StderrFilter`, which drops that line and absl's notice before it, nothing else.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

#: the environment of a quiet measurement child (see the module docstring)
QUIET_ENV: dict[str, str] = {
    # TensorFlow's C++ log (absl): 0 all, 1 hides INFO, 2 also WARNING, 3 also ERROR. 2 keeps
    # its errors and hides the start-up INFO lines (and absl's notice, printed with the first)
    "TF_CPP_MIN_LOG_LEVEL": "2",
    # kineto (torch.profiler's C++ side): levels VERBOSE 0 ... ERROR 4, USDT 5; its USDT marks
    # (profiler_start/stop) are printed below 6 and its "ERROR" on a CPU-only machine is the
    # failed GPU probe. mlprof profiles CPU activity only; a profiler that fails raises in
    # Python and fails the profile with its own line
    "KINETO_LOG_LEVEL": "6",
    # multiprocessing's resource tracker (started with the server) said at law run's end
    # "There appear to be 2 leaked semaphore objects to clean up at shutdown" after a
    # torch.compile measurement: its compile workers' semaphores, left when mlprof kills what
    # a measurement started, which the tracker then removes. Only that warning, only there
    "PYTHONWARNINGS": "ignore:resource_tracker:UserWarning:multiprocessing.resource_tracker",
}

#: torch's log lines dropped in a quiet child: (logger, start of the message)
QUIET_TORCH_LINES: tuple[tuple[str, str], ...] = (
    # torch.compile's first compile on a machine with a CUDA build of torch but no CUDA runtime
    ("torch.utils.cpp_extension", "No CUDA runtime is found"),
)


#: C++ start-up notices dropped from a quiet worker's stderr (fd 2) by :class:`StderrFilter`:
#: TensorFlow prints "oneDNN custom operations are on" through absl before absl's logging is
#: initialised, so ``TF_CPP_MIN_LOG_LEVEL`` does not reach it. It is printed where oneDNN is
#: on by default (x86 CPUs with AVX-512 VNNI/BF16 or AMX: twice per TensorFlow child on this
#: Xeon, never on an AVX2-only EPYC), each time after absl's notice. Matched as bytes in a line
QUIET_STDERR_LINES: tuple[bytes, ...] = (
    b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    b"] oneDNN custom operations are on.",
    # a tfaot child that loads XLA's executables from the store's compile cache: TensorFlow
    # reads each entry as text first, then as the binary it is (ReadTextOrBinaryProto), and
    # logs the failed text parse as an error; and XLA's CPU loader names LLVM's tuning
    # pseudo-features (+prefer-no-scatter/gather), which no CPU lists, as "not supported on
    # the host machine" (3 lines of ~3,000 characters per load, TF 2.21). A real mismatch
    # (+avx512f on an AVX2 host) still shows; mlprof keys the cache by the CPU's flags
    b"Error parsing text-format tensorflow.XlaSerializedCacheEntry: ",
    b"Target machine feature +prefer-no-scatter is not  supported on the host machine.",
    b"Target machine feature +prefer-no-gather is not  supported on the host machine.",
)


#: the name of :class:`StderrFilter`'s thread (a reused worker's own, not its job's)
STDERR_THREAD = "mlprof-stderr"


class StderrFilter:
    """This process's fd 2 through a pipe: a thread forwards every line to the real stderr
    except those containing one of ``drop``. C++ libraries write to fd 2 directly, so only a
    filter at the file descriptor reaches them. :meth:`close` restores fd 2 and forwards what
    is left, partial last line included."""

    def __init__(self, drop: tuple[bytes, ...] = QUIET_STDERR_LINES) -> None:
        import threading

        self.drop = drop
        self.saved = os.dup(2)
        r, w = os.pipe()
        os.dup2(w, 2)
        os.close(w)
        self._read = r
        self.thread = threading.Thread(target=self._pump, name=STDERR_THREAD, daemon=True)
        self.thread.start()

    def _keep(self, line: bytes) -> bool:
        return not any(d in line for d in self.drop)

    def _pump(self) -> None:
        rest = b""
        while True:
            chunk = os.read(self._read, 65536)
            if not chunk:
                break
            *lines, rest = (rest + chunk).split(b"\n")
            kept = [x for x in lines if self._keep(x)]
            if kept:
                os.write(self.saved, b"\n".join(kept) + b"\n")
        if rest and self._keep(rest):
            os.write(self.saved, rest)
        os.close(self._read)

    def close(self, timeout: float = 2.0) -> None:
        """Restore fd 2 (the pipe's write end closes, the thread sees its end) and wait up to
        ``timeout`` s for the thread to forward the rest."""
        import sys

        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(self.saved, 2)
        self.thread.join(timeout)


def verbose(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``MLP_VERBOSE`` asks for everything (any value but empty or ``0``): luigi's
    INFO lines in ``law run`` and the children's library start-up logs."""
    env = os.environ if environ is None else environ
    return env.get("MLP_VERBOSE", "").strip() not in ("", "0")


def child_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables to add to a measurement child's environment: :data:`QUIET_ENV` without
    those already set in ``environ`` (default ``os.environ``), nothing when verbose."""
    env = os.environ if environ is None else environ
    if verbose(env):
        return {}
    return {k: v for k, v in QUIET_ENV.items() if k not in env}


@contextmanager
def quiet_children() -> Iterator[None]:
    """Within the block, ``os.environ`` has :func:`child_env`: a process started in it (the
    measurement server) inherits it; this process's own environment is restored after."""
    added = child_env()
    os.environ.update(added)
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


class _DropLines(logging.Filter):
    """Drops records whose message starts with ``prefix``."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            return not str(record.getMessage()).startswith(self.prefix)
        except Exception:  # a record that does not format: let its handler say so
            return True


def quiet_torch_logs() -> None:
    """In a child that imports torch: drop :data:`QUIET_TORCH_LINES` unless verbose. A filter on
    the named logger (created now if torch has not yet imported its module), so every other
    record of it still shows; called twice, it adds nothing."""
    if verbose():
        return
    for name, prefix in QUIET_TORCH_LINES:
        log = logging.getLogger(name)
        if not any(isinstance(f, _DropLines) and f.prefix == prefix for f in log.filters):
            log.addFilter(_DropLines(prefix))
