"""Run a measurement in a child process with a timeout, so the caller stays clean.

Children are forked from a multiprocessing *forkserver* that has already imported numpy, onnx and
onnxruntime (but created no session and no thread pool). Starting a child then costs a few
milliseconds instead of the ~0.3 s of a fresh interpreter, while every measurement still gets
its own process: a crash, a hang or a leak costs only that measurement.

As with any multiprocessing start method other than fork, a script that calls
:func:`run_isolated` (or :func:`mlprof.measure.measure_isolated`) must do so under
``if __name__ == "__main__":``, since the server imports the main module.

The parent waits with ``poll`` (no busy loop, so it does not steal a core from the child).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import signal
import time
import traceback
from collections.abc import Callable
from typing import Any

from mlprof.errors import MeasurementFailed, MLProfError

DEFAULT_TIMEOUT = 600.0
#: modules imported once by the forkserver, inherited by every measurement child
PRELOAD = ["mlprof.measure.child"]
#: added when the first child of this process needs PyTorch (script models, torch runtimes)
PRELOAD_TORCH = ["mlprof.measure.child_torch"]

_ctx_pid: int | None = None


def default_timeout() -> float:
    """``$MLP_TIMEOUT`` in seconds (default 600)."""
    raw = os.environ.get("MLP_TIMEOUT", "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        raise MLProfError(f"must be a number of seconds, got {raw!r}",
                          field="MLP_TIMEOUT") from None
    if value <= 0:
        raise MLProfError(f"must be > 0, got {raw!r}", field="MLP_TIMEOUT")
    return value


def _context(torch: bool = False) -> multiprocessing.context.BaseContext:
    """The forkserver context, valid in this process (also after a fork, e.g. luigi workers).

    The server starts with the first child; ``torch`` then also preloads PyTorch (a later
    child that needs torch from a server started without it imports torch itself).
    """
    global _ctx_pid
    ctx = multiprocessing.get_context("forkserver")
    pid = os.getpid()
    fs = multiprocessing.forkserver._forkserver
    if _ctx_pid != pid:
        if fs._forkserver_pid is not None and _ctx_pid is not None:
            # we were forked from a process that had started a forkserver: start our own
            fs._forkserver_pid = None
            fs._forkserver_address = None
            fs._forkserver_alive_fd = None
        _ctx_pid = pid
    if fs._forkserver_pid is None:
        preload = list(PRELOAD) + (PRELOAD_TORCH if torch else [])
        main = getattr(__import__("__main__"), "__file__", None)
        if main and os.path.exists(main):
            # import the main script once in the server, not in every child
            preload.insert(0, "__main__")
        ctx.set_forkserver_preload(preload)
        # start it now, without the current directory on its sys.path (python -c puts it
        # first, so a stray onnx.py or an old mlprof/ there would shadow the installed ones)
        old = os.environ.get("PYTHONSAFEPATH")
        os.environ["PYTHONSAFEPATH"] = "1"
        try:
            multiprocessing.forkserver.ensure_running()
        finally:
            if old is None:
                os.environ.pop("PYTHONSAFEPATH", None)
            else:
                os.environ["PYTHONSAFEPATH"] = old
    return ctx


def prestart(torch: bool = False) -> None:
    """Start the measurement server of this process in the background (if not yet running)."""
    _context(torch)


def _child_main(conn: Any, func: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    def progress(fraction: float, message: str) -> None:
        conn.send(("progress", (fraction, message)))

    try:
        result = func(**kwargs, progress=progress)
        conn.send(("ok", result))
    except MLProfError as e:
        conn.send(("error", e))
    except BaseException as e:  # report anything, including KeyboardInterrupt/SystemExit
        tb = traceback.format_exc(limit=-3)
        conn.send(("error", MeasurementFailed(f"{type(e).__name__}: {e}", status="failed")))
        conn.send(("traceback", tb))
    finally:
        conn.close()


def run_isolated(func: Callable[..., Any], kwargs: dict[str, Any], *,
                 timeout: float | None = None,
                 progress: Callable[[float, str], None] | None = None,
                 label: str = "measurement", torch: bool = False) -> Any:
    """Call ``func(**kwargs, progress=...)`` in a child process and return its result.

    Raises :class:`MeasurementFailed` (``status`` ``"timeout"`` or ``"failed"``) when the child
    hangs past ``timeout``, crashes (signal) or exits without a result, and re-raises the
    :class:`MLProfError` the child raised. Ctrl-C kills the child and propagates.
    """
    timeout = default_timeout() if timeout is None else float(timeout)
    ctx = _context(torch)
    recv_conn, send_conn = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_main, args=(send_conn, func, kwargs),
                       name=f"mlprof-measure-{label}", daemon=True)
    start = time.monotonic()
    proc.start()
    send_conn.close()
    error: BaseException | None = None
    try:
        while True:
            remaining = timeout - (time.monotonic() - start)
            if remaining <= 0:
                raise MeasurementFailed(f"{label}: timed out after {timeout:g} s (MLP_TIMEOUT); "
                                        "the measurement process was killed", status="timeout")
            if not recv_conn.poll(min(remaining, 5.0)):
                if not proc.is_alive() and not recv_conn.poll(0):
                    break
                continue
            try:
                kind, payload = recv_conn.recv()
            except EOFError:
                break
            if kind == "progress":
                if progress is not None:
                    progress(*payload)
            elif kind == "ok":
                return payload
            elif kind == "error":
                error = payload
            elif kind == "traceback" and isinstance(error, MeasurementFailed):
                error.traceback = payload  # type: ignore[attr-defined]
        if error is not None:
            raise error
        proc.join(10)
        raise MeasurementFailed(f"{label}: {_describe_exit(proc.exitcode)}", status="failed")
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(10)
        recv_conn.close()


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "the measurement process did not exit"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (out of memory?)" if -code == signal.SIGKILL else ""
        return f"the measurement process crashed with {name}{hint}"
    return f"the measurement process exited with code {code} without a result"
