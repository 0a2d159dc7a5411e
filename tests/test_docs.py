"""Every example of the README and of docs/ runs as written.

Each fenced ``bash`` block is run, in the order of its file, in a copy of this checkout (the
*sandbox*: its own store, law home and ``$HOME``), as a user who followed the text so far would
run it: in a shell where ``source setup.sh`` ran, with ``set -e``. Each ``yaml`` block is read
the way mlprof reads it. A block that breaks fails here, naming the file and line. The files
run in reading order: the README, then the pages of ``docs/`` in the order ``docs/README.md``
(the index) links them, so a page's examples find what the pages before it made, as a reader's
would.

The examples run with ``MLP_QUICK=1`` (documented in docs/configuration.md): it shortens the
*default* measurement (10 calls, 1 warm-up call, no minimum duration) and nothing else; the short
settings reach the output paths like any other, and options written in an example still win.

An HTML comment right above a block (invisible on GitHub) tells this test what it needs:

- ``<!-- docs-test: skip REASON -->``: not run, with the reason (a network clone, a cluster);
  the test lists these skips so they stay few and visible;
- ``<!-- docs-test: file PATH -->``: a YAML block is written to PATH in the sandbox (where the
  text says to put it) and read from there: an experiment file, a model YAML;
- ``<!-- docs-test: setup COMMAND -->``: a command run first (``mkdir -p ~/exps``), for what the
  text tells the user to have;
- ``<!-- docs-test: clone -->``: ``git clone <this repository> mlprof && cd mlprof`` is the
  sandbox itself.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.slow


def reading_order() -> list[str]:
    """The README, then the pages of ``docs/`` as its index links them (pages it does not link
    last, by name: ``tests/test_readme.py`` requires every page to be linked)."""
    pages = sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md"))
    index = REPO / "docs" / "README.md"
    linked = [f"docs/{name}" for name in
              re.findall(r"\]\(([\w./-]+\.md)\)", index.read_text(encoding="utf-8"))
              if not name.startswith("..")] if index.exists() else []
    first = [p for p in dict.fromkeys(["docs/README.md", *linked]) if p in pages]
    return ["README.md", *first, *(p for p in pages if p not in first)]


#: the documents whose examples run
DOCS = reading_order()

#: languages of blocks that are examples (others, and blocks without one, are output or text)
RUN = ("bash", "sh", "shell")
READ = ("yaml", "yml")

#: how long one block may take (the longest, a PlotProfile of ResNet-18, takes minutes)
TIMEOUT = 1800

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
_DIRECTIVE = re.compile(r"<!--\s*docs-test:\s*(\w[\w-]*)\s*(.*?)\s*-->", re.S)
_CLONE = "git clone <this repository> mlprof && cd mlprof"


@dataclass
class Example:
    """One fenced block of a document, with the directives above it."""

    doc: str
    line: int
    lang: str
    text: str
    directives: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def examples(doc: str) -> list[Example]:
    """The fenced blocks of ``doc`` that are examples (see :data:`RUN` and :data:`READ`)."""
    text = (REPO / doc).read_text(encoding="utf-8")
    out = []
    for m in _FENCE.finditer(text):
        lang = m.group(1).lower()
        if lang not in RUN + READ:
            continue
        before = text[:m.start()].rstrip().splitlines()
        directives: dict[str, str] = {}
        while before and before[-1].strip().startswith("<!--"):
            for d in _DIRECTIVE.finditer(before.pop()):
                directives[d.group(1)] = d.group(2)
        out.append(Example(doc, text[:m.start()].count("\n") + 1, lang, m.group(2),
                           directives))
    return out


ALL = [e for doc in DOCS for e in examples(doc)]


def test_every_example_is_run_or_says_why_not():
    """Skips are few and give a reason; the documents have examples at all."""
    assert len(ALL) > 20
    skipped = [e for e in ALL if "skip" in e.directives]
    for e in skipped:
        assert len(e.directives["skip"]) > 10, f"{e.id}: a skip needs its reason"
    assert len(skipped) <= len(ALL) // 4, [e.id for e in skipped]
    unknown = {k for e in ALL for k in e.directives} - {"skip", "file", "setup", "clone"}
    assert not unknown, unknown


_IGNORE = shutil.ignore_patterns(".git", ".venv", "data", ".law", "__pycache__", "*.egg-info",
                                 ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules")


def _stale_install(venv: Path) -> str | None:
    """Why ``source setup.sh`` in the sandbox would reinstall into ``venv``, or None.

    The sandbox shares this checkout's venv (a second install would take minutes and gigabytes).
    When ``pyproject.toml`` or the extras changed since the venv was installed, the sandbox's
    ``setup.sh`` would reinstall, pointing the venv's editable install at the sandbox, a
    temporary directory that is deleted after the test: every later ``import mlprof`` in that
    venv would then fail. ``setup.sh --check-install`` answers with setup.sh's own stamp.
    """
    proc = subprocess.run(["bash", str(REPO / "setup.sh"), "--check-install"], cwd=REPO,
                          env={**os.environ, "MLP_VENV": str(venv)}, capture_output=True,
                          text=True)
    if proc.returncode == 0:
        return None
    said = (proc.stdout + proc.stderr).strip()
    return said or f"setup.sh --check-install: exit code {proc.returncode}"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Path:
    """A copy of this checkout with its own store, law home and home directory."""
    stale = _stale_install(Path(os.environ.get("VIRTUAL_ENV") or REPO / ".venv"))
    if stale:
        pytest.fail(stale)
    root = tmp_path_factory.mktemp("docs") / "mlprof"
    shutil.copytree(REPO, root, ignore=_IGNORE, symlinks=True)
    (root.parent / "home").mkdir()
    return root


def _env(sandbox: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MLP_", "LAW_")) or k in ("MLP_EXTRAS",)}
    venv = Path(os.environ.get("VIRTUAL_ENV") or REPO / ".venv")
    env.update(HOME=str(sandbox.parent / "home"), MLP_VENV=str(venv), MLP_QUICK="1",
               SANDBOX=str(sandbox))
    return env


def _read_yaml_example(ex: Example, sandbox: Path) -> None:
    """Write a YAML example where its ``file`` directive says and read it as mlprof does."""
    import yaml

    target = ex.directives.get("file")
    if not target:
        yaml.safe_load(ex.text)  # a fragment: at least valid YAML
        return
    path = sandbox / target
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ex.text, encoding="utf-8")
    data = yaml.safe_load(ex.text)
    if "model" in data:
        from mlprof.model import read_model_file

        read_model_file(path)
    else:
        from mlprof.experiments import load_experiment

        load_experiment(path)


_TIMES: dict[str, float] = {}


@pytest.mark.parametrize("ex", ALL, ids=[e.id for e in ALL])
def test_example_runs_as_written(ex: Example, sandbox: Path):
    if "skip" in ex.directives:
        pytest.skip(ex.directives["skip"])
    t0 = time.perf_counter()
    if ex.lang in READ:
        _read_yaml_example(ex, sandbox)
        return
    script = ex.text
    if "clone" in ex.directives:
        assert _CLONE in script, f"{ex.id}: no {_CLONE!r} to stand for the sandbox"
        script = script.replace(_CLONE, 'cd "$SANDBOX"')
    setup = ex.directives.get("setup", "")
    full = ("set -eo pipefail\n"
            'cd "$SANDBOX" && source setup.sh >/dev/null\n'
            + (setup + "\n" if setup else "") + script)
    proc = subprocess.run(["bash", "-c", full], cwd=sandbox, env=_env(sandbox),
                          capture_output=True, text=True, timeout=TIMEOUT)
    _TIMES[ex.id] = time.perf_counter() - t0
    assert proc.returncode == 0, (
        f"{ex.id} failed (exit {proc.returncode}):\n{script}\n--- stdout\n{proc.stdout[-3000:]}"
        f"\n--- stderr\n{proc.stderr[-4000:]}")


def test_report_times():
    """How long the examples took (printed with ``-s``; the closing notes quote it)."""
    for k, v in sorted(_TIMES.items(), key=lambda kv: -kv[1]):
        print(f"{v:8.1f} s  {k}")
    print(f"{sum(_TIMES.values()):8.1f} s  total, {len(_TIMES)} examples run")


def test_a_stale_venv_stops_the_sandbox_before_it_reinstalls(tmp_path):
    """The guard reads setup.sh's stamp: the right one passes, any other names the stamp."""
    venv = tmp_path / "venv"
    venv.mkdir()
    assert "(no stamp)" in (_stale_install(venv) or "")
    (venv / ".mlprof-install-stamp").write_text("1 2 dev\n", encoding="utf-8")
    msg = _stale_install(venv) or ""
    assert ".mlprof-install-stamp" in msg and "source setup.sh" in msg
    real = Path(os.environ.get("VIRTUAL_ENV") or REPO / ".venv") / ".mlprof-install-stamp"
    if real.is_file() and os.environ.get("MLP_EXTRAS") is None:
        shutil.copy(real, venv / ".mlprof-install-stamp")
        assert _stale_install(venv) is None
