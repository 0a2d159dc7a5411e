"""setup.sh's installer (tools/install.py): the progress lines come from a real installer's log
while it runs, uv gets pip's configuration, and a whole install into a new venv goes through uv
with the progress lines the docs show. Real pip and uv runs against this machine's registry (no
fake installer); the end-to-end one is ``slow`` (a venv, uv installed by pip, ~15 s)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

from tests.helpers import REPO

_spec = importlib.util.spec_from_file_location("mlp_install", REPO / "tools" / "install.py")
assert _spec and _spec.loader
install = importlib.util.module_from_spec(_spec)
sys.modules["mlp_install"] = install
_spec.loader.exec_module(install)


def test_pip_progress_reads_a_real_log(tmp_path: Path) -> None:
    """A real ``pip download`` of two small packages writes the log the watcher reads: the last
    line counts both as collected, every line names pip and the phase."""
    log = tmp_path / "install.log"
    lines: list[str] = []
    w = install.Watch("pip", log, tmp_path / "site")
    code = install.run_watched(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(tmp_path / "dl"),
         "six", "idna"], w, interval=0.2, emit=lines.append)
    assert code == 0, log.read_text()
    assert lines, "no progress line"
    assert all(re.match(r"\[\d+:\d\d\] pip: resolving and downloading, ", ln) for ln in lines)
    assert "2 packages collected" in lines[-1]


def test_no_two_lines_are_further_apart_than_the_interval(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The console's lines, not the beat, keep the promise: with each progress line taking
    0.5 s to make (injected) and the last line said 2 s before the command starts, no two
    lines are more than ``interval`` (5 s) apart. On a fixed 5 s beat from the command's start
    the first gap was 7.5 s and every other 5.5 s."""
    interval, making = 5.0, 0.5
    said: list[float] = []

    def slow_progress(w: object) -> str:
        time.sleep(making)
        return "a line"

    monkeypatch.setattr(install, "progress", slow_progress)
    monkeypatch.setattr(install, "print", lambda *a, **k: said.append(time.monotonic()),
                        raising=False)
    install._last_said = before = time.monotonic() - 2.0
    code = install.run_watched(["sleep", "9"], install.Watch("pip", tmp_path / "log", tmp_path),
                               interval=interval, emit=install.say)
    assert code == 0 and len(said) >= 3, said
    gaps = [b - a for a, b in zip([before, *said[:-1]], said, strict=True)]
    assert max(gaps) <= interval, gaps


def test_uv_gets_pips_configuration(tmp_path: Path) -> None:
    """pip's settings (here from ``PIP_*`` variables, read back through ``pip config list``)
    become uv's flags, with pip's choice of the best version over all indexes."""
    env = {"PIP_EXTRA_INDEX_URL": "file:///a/simple file:///b/simple",
           "PIP_FIND_LINKS": str(tmp_path), "PIP_CONSTRAINT": str(tmp_path / "c.txt")}

    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        args, _ = install.uv_args(install.pip_settings(sys.executable))
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    joined = " ".join(args)
    assert "--index-strategy unsafe-best-match" in joined
    assert "--extra-index-url file:///a/simple --extra-index-url file:///b/simple" in joined
    assert f"--find-links {tmp_path}" in joined
    assert f"--constraint {tmp_path / 'c.txt'}" in joined


@pytest.mark.slow
def test_install_into_a_new_venv_with_uv(tmp_path: Path) -> None:
    """tools/install.py run as setup.sh runs it, in a new venv without uv: pip installs uv, uv
    installs the package (pip upgraded in the same run), the console shows the phases."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    log = env_dir / "install.log"

    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["UV_CACHE_DIR"] = str(tmp_path / "uv-cache")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not (Path(p) / "uv").exists())
    proc = subprocess.run([str(py), str(REPO / "tools" / "install.py"), "--installer", "uv",
                           "--interval", "0.5", "--log", str(log), "--", "six"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr + log.read_text()
    out = proc.stdout.splitlines()
    assert out[0] == "mlprof: installing uv into the venv with pip"
    assert any(re.match(r"mlprof: \[\d+:\d\d\] uv: ", ln) for ln in out), out
    assert "uv: done, bytecode compiled" in out[-1], out
    freeze = subprocess.run([str(py), "-m", "pip", "freeze"], capture_output=True, text=True,
                            check=True).stdout
    assert re.search(r"^six==", freeze, re.M), freeze


@pytest.mark.slow
def test_pip_is_the_fallback_when_uv_cannot_be_installed(tmp_path: Path) -> None:
    """With a registry that has no uv (pip restricted to a directory holding one wheel, six),
    the install says so in one line and pip installs the package: the fallback, for real."""
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d",
                    str(wheels), "six"], check=True, capture_output=True)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels))
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not (Path(p) / "uv").exists())
    proc = subprocess.run([str(py), str(REPO / "tools" / "install.py"), "--interval", "0.5",
                           "--log", str(env_dir / "install.log"), "--", "six"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout.splitlines()
    fallback = [ln for ln in out if "installing with pip instead" in ln]
    assert len(fallback) == 1 and "uv could not be installed" in fallback[0], out
    assert out[-1].endswith("pip: installed 1 package"), out
    assert not (env_dir / "bin" / "uv").exists()


def test_a_mistyped_installer_is_one_line(tmp_path: Path) -> None:
    """``MLP_INSTALLER=puip``: one line naming the variable and the choices, exit 40, nothing
    installed (the requirement could not be found anyway: no index, an empty directory)."""
    env = {**os.environ, "MLP_INSTALLER": "puip", "PIP_NO_INDEX": "1",
           "PIP_FIND_LINKS": str(tmp_path)}
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "install.py"), "--log",
                           str(tmp_path / "install.log"), "--", "mlprof-no-such-package"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 40
    assert proc.stderr == "mlprof: MLP_INSTALLER='puip': not one of auto, uv, pip\n"
    assert proc.stdout == "" and not (tmp_path / "install.log").exists()
