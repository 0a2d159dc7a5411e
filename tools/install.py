"""Install a requirement set into the running interpreter's venv, with uv when it can, pip else,
and a progress line at least every 10 s.

Why: ``source setup.sh`` with pip took 11 min 51 s on a fresh machine with empty caches (issue
38), most of it pip fetching and unpacking ~8 GB one package at a time, and it printed nothing
after its second line. uv downloads and unpacks in parallel; this script installs uv into the
venv with pip when it is not on PATH, runs ``uv pip install`` with pip's own configuration
(index, extra indexes, find-links, constraints, certificate: the registry we already use; uv
reads none of pip's files itself), and falls back to pip in one line when uv cannot be installed
or fails. Figures measured here are in docs/configuration.md ("Installation").

``MLP_INSTALLER=pip`` (or ``uv``) forces one installer; ``auto`` (the default) prefers uv.

The installer's output goes to the log file; the console gets one line per ``--interval``
seconds naming the phase and how much is left (:func:`progress`), read from that log and from
the sizes on disk. Stdlib only: it runs from setup.sh in a new venv before anything is installed.
Used as ``python tools/install.py --log LOG -- REQUIREMENT-ARGS...`` (pip's syntax: ``-e
PATH[extras]``, ``-r FILE``, names), which both installers accept.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: the values of ``MLP_INSTALLER`` (``--installer``)
INSTALLERS = ("auto", "uv", "pip")

#: the most seconds between two console lines (issue 38: at least one every 10 s)
INTERVAL = 10.0

#: the next progress line is due this share of :data:`INTERVAL` after the last line said; the
#: rest is for making the line (reading the log, summing the sizes on disk). Why not on a
#: 10 s beat: a fresh clone's setup with empty caches (2026-12-01, 43.6 s) showed gaps of
#: 10.47 s and 10.03 s between its lines, the line after the beat and the steps before the
#: install (uv's own install) taking the rest.
BEAT = 0.8

#: pip's configuration keys that choose where packages come from, and uv's flag for each
_PIP_TO_UV = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraint",
    "trusted-host": "--allow-insecure-host",
}


#: when :func:`say` last put a line on the console (time.monotonic())
_last_said = time.monotonic()


def say(msg: str) -> None:
    """One console line, flushed at once (setup.sh's user reads it while the install runs)."""
    global _last_said
    print(f"mlprof: {msg}", flush=True)
    _last_said = time.monotonic()


def pip_settings(python: str) -> dict[str, str]:
    """pip's effective configuration (``pip config list``: its files, then ``PIP_*`` variables;
    a later source wins, as in pip), keyed by option name without section (``extra-index-url``).

    Why: uv reads none of pip's files, so without them it would ignore this machine's extra
    indexes and constraints and could install other versions than pip (measured here: pip.conf
    adds two local indexes and /opt/wheels, /etc/xdg/pip/constraints.txt caps torch)."""
    proc = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True,
                          text=True, check=False)
    out: dict[str, str] = {}
    if proc.returncode != 0:
        return out
    for line in proc.stdout.splitlines():
        m = re.match(r"^([^=]*?)\.([\w-]+)='(.*)'$", line.strip())
        if m and m.group(1) in ("global", "install", ":env:"):
            out[m.group(2)] = m.group(3)
    return out


def uv_args(settings: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """uv's flags and environment for pip's *settings*: the same indexes, links, constraints,
    certificate and timeout, and pip's choice among indexes (the best version over all of them:
    ``--index-strategy unsafe-best-match``; uv's default takes the first index that has the
    name, which here would take pypi.org's torch over the local one)."""
    args = ["--index-strategy", "unsafe-best-match"]
    for key, flag in _PIP_TO_UV.items():
        for value in settings.get(key, "").split():
            args += [flag, value]
    if settings.get("no-index", "").lower() in ("1", "true", "yes", "on"):
        args.append("--no-index")
    env: dict[str, str] = {}
    if settings.get("cert") and not os.environ.get("SSL_CERT_FILE"):
        env["SSL_CERT_FILE"] = settings["cert"]
    timeout = settings.get("default-timeout") or settings.get("timeout")
    if timeout and not os.environ.get("UV_HTTP_TIMEOUT"):
        env["UV_HTTP_TIMEOUT"] = timeout
    return args, env


def tree_bytes(path: Path) -> int:
    """Bytes of the regular files under *path* (0 when it does not exist); a hard link counted
    once per name, as the user's ``du --count-links`` would."""
    total = 0
    stack = [str(path)]
    while stack:
        try:
            it = os.scandir(stack.pop())
        except OSError:
            continue
        with it:
            for e in it:
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    elif e.is_file(follow_symlinks=False):
                        total += e.stat(follow_symlinks=False).st_size
                except OSError:
                    pass
    return total


def _count_dirs(path: Path) -> int:
    try:
        return sum(1 for e in os.scandir(path) if e.is_dir())
    except OSError:
        return 0


def _packages(n: int) -> str:
    return f"{n} package" if n == 1 else f"{n} packages"


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def _dist_infos(site: Path) -> set[str]:
    """The distributions whose ``.dist-info`` is in *site* (pip writes it when a package's files
    are all in place): how far pip's silent install phase is."""
    try:
        return {_norm(e.name.split("-")[0]) for e in os.scandir(site)
                if e.name.endswith(".dist-info")}
    except OSError:
        return set()


def _count_py(path: Path) -> tuple[int, int]:
    """(.py files, .pyc files) under *path*: what uv's bytecode step has to do and has done."""
    py = pyc = 0
    for _root, _dirs, files in os.walk(path):
        for f in files:
            py += f.endswith(".py")
            pyc += f.endswith(".pyc")
    return py, pyc


_UNITS = {"b": 1e-6, "kb": 1e-3, "kib": 1.024e-3, "mb": 1.0, "mib": 1.048576, "gb": 1e3,
          "gib": 1073.741824}


def _mb(number: str, unit: str) -> float:
    return float(number) * _UNITS.get(unit.lower(), 1.0)


def _size(mb: float) -> str:
    return f"{mb / 1000:.1f} GB" if mb >= 1000 else f"{mb:.0f} MB"


@dataclass
class Watch:
    """What the progress line is computed from: the installer's log, and the directories whose
    growth shows the bytes (the installer's cache while downloading, site-packages while
    installing). ``cache_entries0`` is the number of unpacked wheels in uv's cache at start."""

    installer: str
    log: Path
    site: Path
    cache: Path | None = None
    cache_entries0: int = 0
    t0: float = field(default_factory=time.monotonic)
    offset: int = 0


def progress(w: Watch) -> str:
    """The progress line for *w* now: the phase, how many packages of how many, and the MB so
    far, from the installer's log (only the part written since *w.offset*, where this install
    started) and the sizes on disk. Its format, for docs/configuration.md::

        [2:10] uv: downloading and unpacking, 57 of 140 packages ready, 2.1 GB so far (now: ...)
        [4:05] uv: installed 140 packages; compiling bytecode (.pyc, as pip does), 31200 of ...
        [2:10] pip: installing, 57 of 120 packages in place, 3.9 GB in site-packages so far

    uv prints a line per large download and per phase, pip one per package it collects and the
    list of all before installing; neither prints anything while it unpacks or installs, which
    is what the sizes on disk show.
    """
    try:
        with open(w.log, encoding="utf-8", errors="replace") as f:
            f.seek(w.offset)
            text = f.read()
    except OSError:
        text = ""
    elapsed = int(time.monotonic() - w.t0)
    head = f"[{elapsed // 60}:{elapsed % 60:02d}] {w.installer}:"
    if w.installer == "uv":
        return f"{head} {_uv_phase(text, w)}"
    return f"{head} {_pip_phase(text, w)}"


def _uv_phase(text: str, w: Watch) -> str:
    if m := re.search(r"^Bytecode compiled (\d+) files", text, re.M):
        return f"done, bytecode compiled for {m.group(1)} files"
    if m := re.search(r"^Installed (\d+) packages? in", text, re.M):
        py, pyc = _count_py(w.site)
        return (f"installed {m.group(1)} packages; compiling bytecode (.pyc, as pip does), "
                f"{pyc} of {py} files")
    resolved = re.search(r"^Resolved (\d+) packages? in", text, re.M)
    if not resolved:
        return "resolving (reading the indexes' metadata)"
    n = int(resolved.group(1))
    if m := re.search(r"^Prepared (\d+) packages? in", text, re.M):
        site = tree_bytes(w.site) / 1e6
        return f"installing {m.group(1)} packages, {_size(site)} in site-packages so far"
    big = re.findall(r"^Downloading (\S+) \(([\d.]+)\s*(\w+)\)", text, re.M)
    done = set(re.findall(r"^ Downloaded (\S+)", text, re.M))
    ready = _count_dirs(w.cache / "archive-v0") - w.cache_entries0 if w.cache else 0
    cached = tree_bytes(w.cache) / 1e6 if w.cache else 0.0
    line = (f"downloading and unpacking, {min(max(ready, 0), n)} of {n} packages ready, "
            f"{_size(cached)} so far")
    pending = [(name, _mb(num, unit)) for name, num, unit in big if name not in done]
    if pending:
        line += " (now: " + ", ".join(f"{nm} {_size(mb)}" for nm, mb in pending[:3])
        line += f" and {len(pending) - 3} more)" if len(pending) > 3 else ")"
    return line


def _pip_phase(text: str, w: Watch) -> str:
    if m := re.search(r"^Successfully installed (.*)$", text, re.M):
        return f"installed {_packages(len(m.group(1).split()))}"
    if m := re.search(r"^Installing collected packages: (.*)$", text, re.M):
        names = {_norm(x) for x in m.group(1).split(",")}
        site = tree_bytes(w.site) / 1e6
        return (f"installing, {len(names & _dist_infos(w.site))} of {len(names)} packages in "
                f"place, {_size(site)} in site-packages so far")
    collected = re.findall(r"^(?:Collecting|Processing|Obtaining) (\S+)", text, re.M)
    sizes = re.findall(r"^\s*Downloading \S+ \(([\d.]+)\s*(\w+)\)", text, re.M)
    mb = sum(_mb(num, unit) for num, unit in sizes)
    line = (f"resolving and downloading, {len(collected)} packages collected, "
            f"{_size(mb)} downloaded")
    if collected:
        last = collected[-1].rsplit("/", 1)[-1]
        line += f" (last: {last})"
    return line


def run_watched(cmd: Sequence[str], w: Watch, *, env: dict[str, str] | None = None,
                interval: float = INTERVAL, emit: Callable[[str], None] = say) -> int:
    """Run *cmd* with its output appended to *w.log*, emitting :func:`progress` while it runs,
    at most *interval* seconds after the line before (:data:`BEAT`; with :func:`say`, counted
    from its last line, which may be older than this command), and once when it ends; its exit
    code."""
    with open(w.log, "ab") as log:
        w.offset = log.tell()
        w.t0 = time.monotonic()
        proc = subprocess.Popen(list(cmd), stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})})
        due = (min(_last_said, w.t0) if emit is say else w.t0) + interval * BEAT
        while True:
            try:
                code = proc.wait(timeout=max(due - time.monotonic(), 0.01))
                break
            except subprocess.TimeoutExpired:
                emit(progress(w))
                due = time.monotonic() + interval * BEAT
    if code == 0:
        emit(progress(w))
    return code


def _last_line(log: Path) -> str:
    try:
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1].strip()[:200] if lines else ""


def find_uv(python: str, w: Watch, interval: float = INTERVAL) -> str | None:
    """uv's executable: on PATH, in this venv, or installed into this venv by pip (17.6 MB,
    5.7 s here); None when pip cannot install it."""
    found = shutil.which("uv")
    if found:
        return found
    venv_uv = Path(python).parent / "uv"
    if not venv_uv.exists():
        say("installing uv into the venv with pip")
        code = run_watched([python, "-m", "pip", "install", "uv"], Watch("pip", w.log, w.site),
                           interval=interval)
        if code != 0:
            return None
    return str(venv_uv) if venv_uv.exists() else None


def install(reqs: Sequence[str], log: Path, installer: str = "auto",
            interval: float = INTERVAL) -> int:
    """Install *reqs* (pip's syntax) into this interpreter's environment with *installer*
    (``auto``: uv, pip when uv cannot be installed or fails; ``uv``; ``pip``); 0 on success."""
    python = sys.executable
    site = Path(sysconfig.get_paths()["purelib"])
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(b"")
    w = Watch("pip", log, site)
    if installer in ("auto", "uv"):
        uv = find_uv(python, w, interval)
        if uv is None:
            if installer == "uv":
                say(f"uv could not be installed ({_last_line(log)})")
                return 1
            say(f"uv could not be installed ({_last_line(log)}); installing with pip instead")
        else:
            args, env = uv_args(pip_settings(python))
            cache = subprocess.run([uv, "cache", "dir"], capture_output=True, text=True,
                                   env={**os.environ, **env}, check=False).stdout.strip()
            uw = Watch("uv", log, site, Path(cache) if cache else None)
            uw.cache_entries0 = _count_dirs(uw.cache / "archive-v0") if uw.cache else 0
            # pip itself upgraded in the same run, as setup.sh's pip path does first;
            # bytecode compiled at install, as pip does (else the first imports compile it)
            cmd = [uv, "pip", "install", "--python", python, "--compile-bytecode",
                   "--upgrade-package", "pip", *args, "pip", *reqs]
            code = run_watched(cmd, uw, env=env, interval=interval)
            if code == 0:
                return 0
            if installer == "uv":
                return code
            say(f"uv failed (exit {code}: {_last_line(log)}); installing with pip instead")
    for cmd in ([python, "-m", "pip", "install", "--upgrade", "pip"],
                [python, "-m", "pip", "install", *reqs]):
        code = run_watched(cmd, Watch("pip", log, site), interval=interval)
        if code != 0:
            return code
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python tools/install.py --log LOG -- REQUIREMENT-ARGS...`` (see the module text)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--log", type=Path, required=True)
    p.add_argument("--installer", default=os.environ.get("MLP_INSTALLER", "") or "auto")
    p.add_argument("--interval", type=float, default=INTERVAL)
    p.add_argument("reqs", nargs="+")
    a = p.parse_args(argv)
    if a.installer not in INSTALLERS:  # one line, exit 40 (mlprof's code for a bad input)
        print(f"mlprof: MLP_INSTALLER={a.installer!r}: not one of {', '.join(INSTALLERS)}",
              file=sys.stderr)
        return 40
    return install(a.reqs, a.log, a.installer, a.interval)


if __name__ == "__main__":
    sys.exit(main())
