"""Small helpers shared by the library and the tasks: hashing, atomic writes, provenance."""

from __future__ import annotations

import contextlib
import difflib
import functools
import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any


def checkout_dir() -> str:
    """The checkout this mlprof runs from (the directory above the package): ``MLP_BASE``'s
    default, for a run without ``source setup.sh``."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


#: the options of ``law run`` that only look (law's ``Task.interactive_params``, named without
#: importing law) or ask for help: nothing is measured
LAW_LOOKING_OPTIONS = ("--help", "-h", "--help-all", "--print-deps", "--print-status",
                       "--print-output", "--fetch-output", "--remove-output")


def looking(options: Sequence[str]) -> bool:
    """Whether ``law run TASK OPTIONS`` only looks (:data:`LAW_LOOKING_OPTIONS`)."""
    return any(a.split("=", 1)[0] in LAW_LOOKING_OPTIONS for a in options)


def law_run_measures_script(options: Sequence[str]) -> bool:
    """Whether ``law run TASK OPTIONS`` names a model script (an argument ending in ``.py`` or
    with ``.py::``) and does not only look (:data:`LAW_LOOKING_OPTIONS`): then its first work
    waits for the measurement server's torch (:mod:`mlprof.lawcli`,
    :mod:`mlprof.tasks.framework.hooks`)."""
    if looking(options):
        return False
    return any(a.endswith(".py") or ".py::" in a for a in options)


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """Return the hex sha256 digest of a file's content."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            block = f.read(chunk)
            if not block:
                break
            h.update(block)
    return h.hexdigest()


def short_hash(*parts: Any, length: int = 8) -> str:
    """A short, stable hex hash of the string forms of ``parts``."""
    h = hashlib.sha256()
    for p in parts:
        h.update(str(p).encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:length]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` only on success.

    A crash or Ctrl-C inside the block leaves no (half-written) file at ``path``.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[str]:
    """Yield a temporary directory next to ``path``; it replaces ``path`` only on success.

    The whole directory appears at once, or not at all (an old one at ``path`` is removed
    just before the rename).
    """
    import shutil

    path = os.fspath(path)
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(path)}.", dir=parent)
    try:
        yield tmp
        os.chmod(tmp, 0o755)
        if os.path.exists(path):
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "w") as f:
        f.write(text)


def write_json_atomic(path: str | os.PathLike, data: Any) -> None:
    """Write ``data`` as indented JSON to ``path`` atomically."""
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")


@functools.cache
def git_commit(directory: str | None = None) -> str | None:
    """The git commit of ``directory`` (default: the mlprof checkout), ``+dirty`` if modified.

    Returns None outside a git checkout.
    """
    directory = directory or str(Path(__file__).resolve().parent.parent)
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True,
                             text=True, timeout=10)
        if sha.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=directory, capture_output=True, text=True, timeout=10)
        return sha.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


@functools.cache
def dist_version(dist: str) -> str | None:
    """The installed version of a distribution, without importing it (None if missing).

    Cached: every task instance asks (its runtime's version is in its output path), and one
    lookup reads package metadata from disk (~0.8 ms).
    """
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def float_tag(value: float) -> str:
    """A path-safe representation of a float: 0.5 -> '0p5', 2.0 -> '2'."""
    text = f"{value:g}"
    return text.replace(".", "p").replace("-", "m").replace("+", "")


def close_options(option: str, names: Sequence[str], n: int = 3) -> list[str]:
    """What ``option`` (a mistyped option or name) was probably meant to be: the (up to ``n``)
    names it begins (an abbreviation), else the closest one."""
    starting = sorted(o for o in names if o.startswith(option))
    return starting[:n] or difflib.get_close_matches(option, names, n=1, cutoff=0.7)


def did_you_mean(given: str, names: Iterable[str], n: int = 3) -> str:
    """``"; did you mean X?"`` (``"X or Y"``) for a mistyped name, or ``""``: the one way every
    unknown choice (task, runtime, device, precision, scenario, setting, option value) suggests
    what was meant, so that ``PlotRuntime`` -> ``PlotRuntimes`` and ``tourch`` -> ``torch`` read
    alike. Case is ignored (``plotruntimes``); the names ``given`` begins (up to ``n``) come
    first, else the closest one by :func:`difflib.get_close_matches` at cutoff 0.7
    (:func:`close_options`: ``tourch`` -> ``torch`` scores 0.91, ``cpuu`` -> ``cpu`` 0.86,
    while ``tensorrt`` -> ``tensorflow``, 0.67, is no suggestion)."""
    names = list(dict.fromkeys(map(str, names)))
    lower = {name.lower(): name for name in names}
    text = str(given).strip().lower()
    if not text:
        return ""
    close = [lower[c] for c in close_options(text, list(lower), n)]
    close = [c for c in close if c != given]
    return f"; did you mean {' or '.join(close)}?" if close else ""
