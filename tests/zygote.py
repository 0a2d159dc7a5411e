"""A ``law run`` without its start-up: a process that has imported law, luigi and mlprof's task
modules once forks one child per ``law run`` the tests ask for (``tests.helpers.law_run``).

Why: the suite runs about 300 ``law run`` commands, and each paid about 1 s of imports (law,
luigi, pandas, mlprof's task modules: ``law run MeasureRuntime --help`` takes 0.83 s) before it
did anything. A forked child starts with all of that loaded and is still its own process, as
``law run`` is: its own environment, working directory, output files, signal handlers, exit
hooks and measurement server (mlprof's hooks are installed in it, never in pytest; a test's
``MLP_TIMEOUT`` reaches its measurements). What a child does is what ``law`` does:
``law.cli.run(["run", TASK, ...])``, then ``sys.exit`` with its code, with ``__main__`` the
``law`` script.

The server is started with the environment that its first request needs (``ZYGOTE_ENV``);
a request whose environment differs in a variable read at import time (``IMPORT_TIME``) runs
as a real ``law run`` subprocess instead (``tests.helpers.law_run`` decides).

The ``mlprof`` command runs the same way (``tests.helpers.mlprof_run``).

Protocol, one Unix-socket connection per command: the client sends one JSON line
``{"prog", "argv", "env", "cwd", "stdout", "stderr"}`` (``prog``: ``law`` or ``mlprof``; the
last two are paths of files the child writes); the server forks a waiter for the connection,
the waiter forks the child and answers ``pid N`` at once and ``rc N`` when the child has ended.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

#: variables that change what is imported or how law reads its configuration, read once at
#: import time: a request that differs from the server in one of these does not use it
IMPORT_TIME = ("PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "VIRTUAL_ENV", "LAW_HOME",
               "LAW_CONFIG_FILE", "LUIGI_CONFIG_PATH", "LUIGI_CONFIG_PARSER", "MLP_BASE",
               "PYTHONWARNINGS", "PYTHONDONTWRITEBYTECODE")

#: the modules the server imports once (law.cfg's [modules] are imported by ``law run`` from
#: its index, and are then already loaded)
PRELOAD = ("law", "law.cli", "law.cli.run", "luigi", "pandas", "matplotlib",
           "mlprof.tasks.discover", "mlprof.tasks.export", "mlprof.tasks.runtime",
           "mlprof.tasks.plotting", "mlprof.tasks.compare", "mlprof.tasks.profile",
           "mlprof.tasks.report", "mlprof.tasks.history", "mlprof.tasks.dashboard",
           "mlprof.tasks.nightly", "mlprof.tasks.peak", "mlprof.cli", "mlprof.api", "onnx",
           "mlprof.model.onnx_graph")


def _child(request: dict, scripts: dict[str, str]) -> None:
    """Become ``law run ...`` or ``mlprof ...`` (never returns)."""
    rc = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(out, fd)
            os.close(out)
        # __main__ is the command's script, as in `law run` (the measurement server imports it)
        import types

        prog = request.get("prog", "law")
        script = scripts[prog]
        main = types.ModuleType("__main__")
        main.__file__ = script
        sys.modules["__main__"] = main
        sys.argv = [script, *request["argv"]]
        import tempfile

        tempfile.tempdir = None  # TMPDIR is read again
        try:
            if prog == "mlprof":  # the mlprof command installs the hooks itself
                from mlprof.cli import main as run_mlprof

                code = run_mlprof()
            else:
                from mlprof.lawcli import main as run
                from mlprof.tasks import install_run_hooks, started_by_law_run

                if started_by_law_run():  # as at the tasks' import under `law run`
                    install_run_hooks()
                code = run(list(request["argv"]))
            rc = code if isinstance(code, int) else 0
        except SystemExit as e:
            if e.code is None:
                rc = 0
            elif isinstance(e.code, int):
                rc = e.code
            else:
                print(e.code, file=sys.stderr)
                rc = 1
        except KeyboardInterrupt:
            rc = 130
        except BaseException:
            import traceback

            traceback.print_exc()
            rc = 1
        # what the interpreter does at exit: join the threads, run the exit hooks, flush
        import atexit
        import threading

        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
        import logging

        logging.shutdown()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(rc)


def _serve_one(conn: socket.socket, scripts: dict[str, str]) -> None:
    """The waiter: read one request, fork its child, answer its pid and exit code."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    f = conn.makefile("rwb")
    request = json.loads(f.readline())
    pid = os.fork()
    if pid == 0:
        f.close()
        conn.close()
        _child(request, scripts)
    f.write(f"pid {pid}\n".encode())
    f.flush()
    _, status = os.waitpid(pid, 0)
    f.write(f"rc {os.waitstatus_to_exitcode(status)}\n".encode())
    f.flush()


def main() -> None:
    """``python -m tests.zygote SOCKET LAW MLPROF`` (the paths of the two commands' scripts):
    import once, then fork per request."""
    address, scripts = sys.argv[1], {"law": sys.argv[2], "mlprof": sys.argv[3]}
    import ctypes
    import importlib

    ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: end with pytest
    for name in PRELOAD:
        importlib.import_module(name)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(address)
    server.listen(16)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the waiters are reaped by the kernel
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in pytest: pytest ends us
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            server.close()
            try:
                _serve_one(conn, scripts)
            finally:
                os._exit(0)
        conn.close()


if __name__ == "__main__":
    main()
