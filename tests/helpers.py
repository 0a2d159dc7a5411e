"""Helpers the tests share: paths, fast settings, running `law run` as a user would, reading a
store back, opening a page. Imported as ``from tests.helpers import ...`` (``tests`` is a package,
so nothing is put on ``sys.path``); the fixtures are in ``conftest.py``."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

DNN = REPO / "examples" / "dnn" / "model_onnx_l10u128.yaml"
#: fast measurement settings for end-to-end tests
FAST = ["--n-calls", "10", "--warmup", "1", "--min-duration", "0"]


def law_env(store: Path, env: dict | None = None) -> dict[str, str]:
    """The environment of a ``law run`` into ``store``: this process's, this checkout's law
    home and configuration where it names none, and ``env`` on top."""
    full_env = dict(os.environ)
    full_env.setdefault("MLP_BASE", str(REPO))
    full_env.setdefault("LAW_HOME", str(REPO / ".law"))
    full_env.setdefault("LAW_CONFIG_FILE", str(REPO / "law.cfg"))
    full_env["MLP_STORE"] = str(store)
    full_env.update(env or {})
    return full_env


def law_run(task: str, *args: str, store: Path, timeout: float = 300,
            env: dict | None = None) -> subprocess.CompletedProcess:
    """``law run TASK ARGS`` with $MLP_STORE set; output captured as text.

    The command runs as a child of ``tests/zygote.py`` (law, luigi and the task modules already
    imported; its own process all the same), or as a ``law`` subprocess where the environment
    differs from the zygote's in a variable read at import time, or with ``MLP_TEST_NO_ZYGOTE=1``.
    """
    full_env = law_env(store, env)
    argv = ["run", task, *args]
    zygote = _zygote(full_env)
    if zygote is not None:
        return zygote.run("law", argv, full_env, cwd=REPO, timeout=timeout)
    return subprocess.run(["law", *argv], cwd=REPO, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def mlprof_run(*args: str, env: dict | None = None, cwd: Path = REPO,
               timeout: float = 600) -> subprocess.CompletedProcess:
    """The ``mlprof`` command with ``env`` (default: this process's), as
    ``subprocess.run(["mlprof", *args], capture_output=True, text=True)``; forked from the
    zygote like :func:`law_run`."""
    full_env = dict(os.environ if env is None else env)
    zygote = _zygote(full_env)
    if zygote is not None:
        return zygote.run("mlprof", list(args), full_env, cwd=cwd, timeout=timeout)
    return subprocess.run(["mlprof", *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=timeout)


class _Zygote:
    """The client of one ``tests/zygote.py`` server (started with the first ``law_run``)."""

    def __init__(self, env: dict) -> None:
        import shutil
        import tempfile

        self.env = {k: env.get(k) for k in _import_time_vars()}
        self.dir = Path(tempfile.mkdtemp(prefix="mlp-zygote-"))
        self.address = str(self.dir / "socket")
        law = shutil.which("law", path=env.get("PATH"))
        mlprof = shutil.which("mlprof", path=env.get("PATH"))
        if law is None or mlprof is None:
            raise FileNotFoundError("law or mlprof")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.zygote", self.address, law, mlprof], cwd=REPO, env=env,
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            self.close()
            raise RuntimeError(f"tests/zygote.py did not start: {line!r}")

    def fits(self, env: dict) -> bool:
        """Whether a command with ``env`` may run as this zygote's child."""
        return self.proc.poll() is None and all(
            env.get(k) == v for k, v in self.env.items())

    def run(self, prog: str, argv: list[str], env: dict, cwd: Path,
            timeout: float) -> subprocess.CompletedProcess:
        """``PROG ARGV`` (``law`` or ``mlprof``) as a child of the zygote, like
        ``subprocess.run(capture_output=True, text=True)``."""
        import json
        import signal
        import socket
        import tempfile
        import time

        with tempfile.TemporaryDirectory(dir=self.dir) as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            request = {"prog": prog, "argv": argv, "env": env, "cwd": str(cwd), "stdout": str(out),
                       "stderr": str(err)}
            deadline = time.monotonic() + timeout
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.connect(self.address)
                f = conn.makefile("rwb")
                f.write(json.dumps(request).encode() + b"\n")
                f.flush()
                pid = int(f.readline().split()[1])
                conn.settimeout(max(0.0, deadline - time.monotonic()))
                try:
                    line = f.readline()
                except TimeoutError:
                    line = b""
                if not line:  # the deadline passed (or the waiter died): as subprocess.run
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                    raise subprocess.TimeoutExpired([prog, *argv], timeout,
                                                    out.read_bytes(), err.read_bytes())
                rc = int(line.split()[1])
            return subprocess.CompletedProcess(
                [prog, *argv], rc, out.read_text(errors="replace"),
                err.read_text(errors="replace"))

    def close(self) -> None:
        """End the server."""
        import shutil

        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


_ZYGOTE: list[_Zygote | None] = []


def _import_time_vars() -> tuple[str, ...]:
    from tests.zygote import IMPORT_TIME

    return IMPORT_TIME


def _zygote(env: dict) -> _Zygote | None:
    """The zygote for ``env``: started on first use; None where the command must be a real
    subprocess (``MLP_TEST_NO_ZYGOTE=1``, or an import-time variable differs from the zygote's)."""
    if os.environ.get("MLP_TEST_NO_ZYGOTE") == "1" or env.get("MLP_TEST_NO_ZYGOTE") == "1":
        return None
    if not _ZYGOTE:
        try:
            _ZYGOTE.append(_Zygote(env))
        except (OSError, RuntimeError):
            _ZYGOTE.append(None)  # tried once: real subprocesses from now on
            return None
        import atexit

        atexit.register(_ZYGOTE[0].close)
    zygote = _ZYGOTE[0]
    return zygote if zygote is not None and zygote.fits(env) else None


def files_in(path: Path) -> list[Path]:
    """All files below ``path`` (none if it does not exist)."""
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.exists() else []


def assert_merged_and_plotted(store: Path, batch_sizes) -> None:
    """A sweep's MergeRuntimes statistics have one row per batch size and PlotRuntimes drew it."""
    import pandas as pd

    (stats,) = [p for p in files_in(store / "MergeRuntimes") if p.name.startswith("stats_")]
    frame = pd.read_csv(stats)
    assert frame["batch_size"].tolist() == list(batch_sizes)
    assert (frame["median_ms"] > 0).all()
    (plot,) = [p for p in files_in(store / "PlotRuntimes") if p.suffix == ".pdf"]
    assert plot.stat().st_size > 1000 and plot.read_bytes().startswith(b"%PDF")


def jobs_dir(store: Path, system: str) -> Path:
    """The one directory of law's submission file, job scripts and logs of a remote sweep."""
    (path,) = {p.parent for p in (store / "jobs").rglob(f"{system}_jobs_*.json")}
    return path


def branch_provenances(store: Path) -> dict[int, dict]:
    """``{batch size: provenance}`` of every MeasureRuntime branch in ``store``."""
    import json

    return {int(p.stem.rsplit("_", 1)[1]): json.loads(p.read_text())
            for p in files_in(store / "MeasureRuntime") if p.name.startswith("runtime_bs_")
            and p.suffix == ".json"}


def _chromium() -> str | None:
    import shutil

    return shutil.which("chromium") or (
        "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


def open_page(browser, path: Path):
    """The page at ``path`` (file://), the problems seen while loading it (console errors and
    warnings, page errors, failed requests) and the dialogs it opened (dismissed)."""
    page = browser.new_page()
    problems: list[str] = []
    dialogs: list[str] = []

    def on_dialog(d) -> None:
        dialogs.append(f"{d.type}: {d.message}")
        d.dismiss()

    page.on("dialog", on_dialog)
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, problems, dialogs


def bounded(fn: Callable[[], Any], seconds: float = 60) -> Any:
    """``fn()`` in a thread joined with a time bound: a read that blocks (a FIFO) or never ends
    (``/dev/zero``) fails the test instead of hanging the suite. Returns ``fn``'s value or
    raises its exception."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            out["error"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still running after {seconds} s (a hang)"
    if "error" in out:
        raise out["error"]
    return out.get("value")


def skip_without(module: str) -> None:
    """Skip the test when ``module`` is not installed, *without importing it* into the test
    process: ``pytest.importorskip("tensorflow")`` loads TensorFlow here, and a later import of
    torch._dynamo (triton) in the same process then dies with a segmentation fault (the whole
    suite, not one test: seen when a test_console test ran before test_export_fallback)."""
    import importlib.util

    import pytest

    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")


def damaged_copies(record: Path, rel: Path, store: Path, prefix: str,
                   damages: Any) -> tuple[Path, dict[str, Path]]:
    """A hostile store: the files of ``record``'s version directory starting with ``prefix``
    copied as versions ``good`` and ``good2`` (a history) under ``store / rel``, and once per
    ``(name, damage, field)`` of ``damages`` into version ``name`` with ``damage`` applied to
    the record's JSON. Returns the good record and ``{"<field> <name>": damaged record}``."""
    import json
    import shutil

    good = store / rel / "good"
    good.mkdir(parents=True)
    for f in record.parent.iterdir():
        if f.name.startswith(prefix):
            shutil.copy(f, good / f.name)
    shutil.copytree(good, store / rel / "good2")
    bad: dict[str, Path] = {}
    for name, damage, field in damages:
        where = store / rel / name
        shutil.copytree(good, where)
        raw = json.loads(record.read_text())
        damage(raw)
        (where / record.name).write_text(json.dumps(raw))
        bad[field + " " + name] = where / record.name
    return good / record.name, bad


def one_warning_each(output: str, bad: dict[str, Path]) -> None:
    """Each damaged record of :func:`damaged_copies` is named in exactly one line of ``output``,
    with its field."""
    for key, path in bad.items():
        field = key.split(" ")[0]
        lines = [line for line in output.splitlines() if str(path) in line]
        assert len(lines) == 1, (key, lines)
        assert field in lines[0], (key, lines[0])
