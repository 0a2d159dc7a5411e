"""The measurement server: a forkserver that has imported the measurement libraries once.

Children are forked from a multiprocessing *forkserver* that has already imported numpy, onnx and
onnxruntime (but created no session and no thread pool). Starting a child then costs a few
milliseconds instead of the ~0.3 s of a fresh interpreter, while every measurement still gets
its own process (:func:`mlprof.measure.isolate.run_isolated`): a crash, a hang or a leak costs
only that measurement.

As with any multiprocessing start method other than fork, a script that calls
:func:`~mlprof.measure.isolate.run_isolated` (or :func:`mlprof.measure.measure_isolated`) must
do so under ``if __name__ == "__main__":``, since the server imports the main module
(:func:`check_main_guard` stops a call outside it with a one-line error).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from mlprof.errors import MLProfError
from mlprof.measure.proctree import alive
from mlprof.measure.quiet import quiet_children

#: modules imported once by the forkserver, inherited by every measurement child
PRELOAD = ["mlprof.measure.child"]
#: added when the first child of this process needs PyTorch (script models, torch runtimes)
PRELOAD_TORCH = ["mlprof.measure.child_torch"]

_ctx_pid: int | None = None
#: the server that has forked a child already (its start is over), by pid: later children
#: start in milliseconds and :func:`waiting_for_start` watches nothing
_serving: int | None = None
#: in the server, at the end of its preload: ``$MLP_TEST_SLOW_PHASE`` with this text makes the
#: server's start that much longer (the tests' deterministic loaded machine)
SLOW_START = "measurement server preload"
#: the server started early behind its gate (:func:`start_early`), until :func:`release_early`
_gated: int | None = None

#: the main script's path, in the server's environment only (see :func:`import_main`)
MAIN_ENV = "MLP_SERVER_MAIN"


def import_main() -> None:
    """In the server, while it preloads: run the main script once as ``__mp_main__``, as the
    children's start (``multiprocessing.spawn.prepare``) would, so that every child forked
    after it finds the script loaded and skips it.

    Why: ``"__main__"`` in a forkserver's preload list means exactly this, but up to Python 3.12
    the server never gets the script's path (CPython gh-126631, gh-137996; fixed in 3.13), so
    every child ran the script again: runpy and pkgutil, the script's directory searched, its
    source compiled (no bytecode for a script), its top level executed. A script that fails
    here is left to the children, which run it and report the error as before."""
    path = os.environ.pop(MAIN_ENV, None)
    if not path or getattr(sys.modules.get("__main__"), "__file__", None) == path:
        return
    from multiprocessing import process, spawn

    current: Any = process.current_process()
    current._inheriting = True  # what forkserver.main sets around the same call
    try:
        spawn.import_main_path(path)
    except BaseException:  # noqa: BLE001  (the children meet it again and say what it is)
        pass
    finally:
        del current._inheriting


def _context(torch: bool = False, gate: bool = False
             ) -> multiprocessing.context.ForkServerContext:
    """The forkserver context, valid in this process (also after a fork, e.g. luigi workers).

    The server starts with the first child; ``torch`` then also preloads PyTorch (a later
    child that needs torch from a server started without it imports torch itself). ``gate``
    (:func:`start_early` only) stops it after its light imports; every other call opens that
    gate (:func:`release_early`): whoever asks for the server wants it whole.
    """
    global _ctx_pid
    if not gate:
        release_early()
    ctx = multiprocessing.get_context("forkserver")
    pid = os.getpid()
    # the server's private state (_forkserver_pid, ensure_running), not in typeshed
    fs: Any = multiprocessing.forkserver._forkserver
    if _ctx_pid != pid:
        if fs._forkserver_pid is not None and _ctx_pid is not None:
            # we were forked (a luigi worker process) from a process whose server runs: share
            # it instead of starting (and importing torch in) one per task; the standard
            # liveness check (waitpid) only works in the process that started the server
            if alive(fs._forkserver_pid):
                fs.ensure_running = types.MethodType(_ensure_running_inherited, fs)
            else:
                _forget_server(fs)
        _ctx_pid = pid
    if fs._forkserver_pid is None:
        preload = (["mlprof.measure.child_light", "mlprof.measure.gate"] if gate else []) \
            + list(PRELOAD) + (PRELOAD_TORCH if torch else [])
        main = getattr(__import__("__main__"), "__file__", None)
        main_path = None
        if main and os.path.exists(main):
            # import the main script once in the server, not in every child (import_main)
            preload.insert(0, "__main__")
            from multiprocessing import spawn

            main_path = spawn.get_preparation_data("ignore").get("init_main_from_path")
        ctx.set_forkserver_preload(preload)
        # start it now, without the current directory on its sys.path (python -c puts it
        # first, so a stray onnx.py or an old mlprof/ there would shadow the installed ones)
        old = os.environ.get("PYTHONSAFEPATH")
        os.environ["PYTHONSAFEPATH"] = "1"
        # for the server only (import_main takes it out of its environment); never a value
        # inherited from elsewhere, which would make the server run that script
        os.environ.pop(MAIN_ENV, None)
        if main_path:
            os.environ[MAIN_ENV] = main_path
        # the server inherits SIGINT ignored: it shares the terminal's process group, and a
        # Ctrl-C during its preload imports (seconds on a busy machine; the server ignores
        # SIGINT only once they are done) printed its KeyboardInterrupt traceback under the
        # one-line "interrupted" message. This process handles Ctrl-C and stops the children.
        import threading

        int_handler = signal.getsignal(signal.SIGINT)
        ignore = (threading.current_thread() is threading.main_thread()
                  and int_handler is not None)
        if ignore:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            # the server's environment silences the libraries' start-up logs (unless
            # MLP_VERBOSE): their C++ loggers read it once, when the child imports them
            with quiet_children():
                multiprocessing.forkserver.ensure_running()
        finally:
            if ignore:
                signal.signal(signal.SIGINT, int_handler)
            os.environ.pop(MAIN_ENV, None)
            if old is None:
                os.environ.pop("PYTHONSAFEPATH", None)
            else:
                os.environ["PYTHONSAFEPATH"] = old
    return ctx


@contextlib.contextmanager
def waiting_for_start(progress: Callable[[float, str], None] | None,
                      warm: Sequence[str] = ()) -> Iterator[None]:
    """Around a child's start (``Process.start()``): while it waits for a server that has not
    forked a child yet, report ``starting the measurement server (importing ...)`` to
    ``progress`` (a :class:`~mlprof.progress.Progress`, whose watcher repeats it after 1.5 s
    of silence), and import the modules ``warm`` (see :func:`_warming`). Nothing is watched
    once the server has forked a child.

    Why: ``start()`` blocks until the server has finished its preload imports (torch's among
    them: 1.2-2.3 s on an idle machine here, longer on a loaded one) and nobody spoke
    meanwhile: the parent was blocked and the child did not exist yet.
    """
    global _serving
    fs: Any = multiprocessing.forkserver._forkserver
    pid = fs._forkserver_pid
    if pid is None or pid == _serving:
        yield
    elif progress is None:
        with _warming(warm):
            yield
    else:
        from mlprof.progress import Progress

        torch = PRELOAD_TORCH[0] in (getattr(fs, "_preload_modules", None) or ())
        imports = "the measurement libraries" + (" and PyTorch" if torch else "")
        with Progress(progress) as rep, _warming(warm):
            rep.phase(f"starting the measurement server (importing {imports})")
            yield
    _serving = fs._forkserver_pid


def import_ahead(modules: Sequence[str]) -> None:
    """Import ``modules`` ahead of their use, while the process would wait anyway; one that
    fails is left to the import that needs it, which says why."""
    for name in modules:
        with contextlib.suppress(Exception):
            importlib.import_module(name)


@contextlib.contextmanager
def _warming(modules: Sequence[str]) -> Iterator[None]:
    """Import ``modules`` in a thread of this process while the body waits for the server's
    start, and wait for that thread at the end (so that no import runs on beside the caller's
    next steps, where two threads importing modules that import each other could deadlock).

    Why: this process only waits while the server imports PyTorch (1.2-1.5 s), and what it
    imports next, after the server's start, is on the critical path: a script point's export
    task imported :mod:`mlprof.model.export` with numpy there, 75-110 ms of the 1.9 s of
    ``benchmarks/script_point.py``. A module that fails to import here is left to the import
    that needs it, which says why."""
    if not modules:
        yield
        return
    import threading

    thread = threading.Thread(target=import_ahead, args=(modules,), name="mlprof-warm-imports",
                              daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join()


@contextlib.contextmanager
def main_file_not_a_file_hidden() -> Iterator[None]:
    """Around a child's start: a ``__main__`` whose ``__file__`` is no file (``python -`` runs a
    script read from standard input as ``<stdin>``) is hidden from multiprocessing's start,
    which then starts the child as for ``python -c``, without running the main script again.

    Why: multiprocessing gives the child ``__main__.__file__`` to run again, and for
    ``<stdin>`` the child died on a ``FileNotFoundError`` traceback and the measurement failed
    with "the measurement process exited with code 1 without a result". mlprof imports
    nothing of such a main anyway (the server preloads only a main that is a file;
    :func:`check_main_guard` checks only those)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not isinstance(path, str) or os.path.isfile(path):
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


def _forget_server(fs: Any) -> None:
    """Drop an inherited forkserver, so that the next child starts this process's own."""
    global _gated
    _gated = None
    fs.__dict__.pop("ensure_running", None)
    fs._forkserver_pid = None
    fs._forkserver_address = None
    fs._forkserver_alive_fd = None


def _ensure_running_inherited(fs: Any) -> None:
    """``ForkServer.ensure_running`` for a server inherited from the parent process."""
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    if fs._forkserver_pid is not None and alive(fs._forkserver_pid):
        return
    _forget_server(fs)  # it is gone: start our own
    _context(torch=False)


def prestart(torch: bool = False) -> None:
    """Start the measurement server of this process in the background (if not yet running).

    Why: starting it (its preload imports) takes 0.42-0.57 s (benchmarks/README.md); started
    when a workflow is scheduled, that time is not spent inside its first branch."""
    _context(torch)


def start_early() -> None:
    """Start the server now, before this process knows whether it will measure: it imports the
    light libraries (:mod:`mlprof.measure.child_light`) and then waits at its gate
    (:mod:`mlprof.measure.gate`) for :func:`release_early`, which any later use of the server
    sends, before it imports onnxruntime and torch. Called by ``law run`` of a model script
    before law is imported (:mod:`mlprof.lawcli`).

    Why: with a model script the run's first work (the script's discovery) waits for the
    server's imports, torch's 1.2 s above all. Started at the parameter checks, 0.3 s into
    ``law run``, the server's light part (0.2 s) was still ahead of torch; started here it is
    done by then (``benchmarks/script_point.py``). A command line that turns out bad costs
    a process that imported numpy and onnx and left by itself: no runtime is imported for it.
    """
    global _gated
    fs: Any = multiprocessing.forkserver._forkserver
    if fs._forkserver_pid is not None:
        return
    from mlprof.measure.gate import GATE_ENV, GO

    old = signal.pthread_sigmask(signal.SIG_BLOCK, {GO})  # inherited: a GO waits in the server
    os.environ[GATE_ENV] = str(os.getpid())
    try:
        _context(torch=True, gate=True)
    finally:
        os.environ.pop(GATE_ENV, None)
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
    _gated = fs._forkserver_pid


def release_early() -> None:
    """Open the gate of a server that :func:`start_early` started (nothing if there is none):
    it goes on with onnxruntime, torch and the rest of its preload."""
    global _gated
    pid, _gated = _gated, None
    if pid is not None:
        from mlprof.measure.gate import GO

        with contextlib.suppress(OSError):  # gone (its starter died): the next use restarts it
            os.kill(pid, GO)


def check_main_guard() -> None:
    """An :class:`MLProfError` when mlprof is called from a script's top level outside
    ``if __name__ == "__main__":``: the measurement process imports the script again, which
    would measure again from inside the measurement (as with multiprocessing).

    Walks the frames itself and parses the script once per process (:func:`_guarded_lines`):
    ``inspect.stack()`` made it 19 ms per measurement under ``law run`` (0.21 s of an 11-point
    sweep), now a few microseconds."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path or not os.path.isfile(path):
        return  # python -c, an interactive session or a notebook: nothing is re-imported
    main_globals = vars(main)
    line = None
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and line is None:  # the innermost top-level frame of the script
        if frame.f_code.co_name == "<module>" and frame.f_globals is main_globals:
            line = frame.f_lineno
        frame = frame.f_back
    if line is None:
        return
    guarded = _guarded_lines(path)
    if guarded is not None and not any(line in r for r in guarded):
        raise MLProfError(f"line {line} calls mlprof at the script's top level: put it "
                          "under `if __name__ == \"__main__\":` (mlprof measures in child "
                          "processes that import the script again, as multiprocessing does)",
                          path)


@functools.cache
def _guarded_lines(path: str) -> tuple[range, ...] | None:
    """The line ranges of the ``if __name__ == "__main__":`` blocks of the script ``path``
    (None when it cannot be read or parsed); once per process and script."""
    import ast

    try:
        with open(path) as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return None
    return tuple(range(n.lineno, (n.end_lineno or n.lineno) + 1) for n in tree.body
                 if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)
                 and "__name__" in ast.unparse(n.test))
