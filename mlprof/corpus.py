"""Whole corpora of model scripts in one run: parallel, resumable, summarized by cause.

``mlprof corpus PATH...`` (and :func:`run_corpus` from Python) runs every model script of one
or more corpora (TurnkeyML's layout: a directory of corpora, each a directory of scripts) through
the same law tasks as ``law run`` — DiscoverModels, ExportOnnx, MeasureRuntime, MergeRuntimes —
with luigi's local scheduler, in this process:

- **in parallel where measurements allow**: ``workers`` tasks run at once, so discoveries and
  exports run beside each other and beside a measurement; measurements never overlap (luigi's
  ``mlprof_measure`` resource and the machine-wide lock of :mod:`mlprof.measure.lock`).
- **resumable**: every finished step is a file in the store, so a run that was interrupted (or
  rerun with more scripts) does only what is missing; failures are retried, since what made a
  script fail (a missing package, a time-out) may have been fixed.
- **summarized by cause**: one row per script and runtime, and at the end the counts per corpus
  and the failures grouped by cause (:mod:`mlprof.report.causes`): needs network (with the host
  or hub repository), needs a package (named), export failed (with the operator), out of memory,
  timeout, crashed, error.
"""

from __future__ import annotations

import contextlib
import glob
import os
import stat
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mlprof.errors import MLProfError
from mlprof.measure.trust import combined, marked, marks
from mlprof.report.causes import corpus_of
from mlprof.runtimes import DEFAULT_RUNTIME


@dataclass(frozen=True)
class Script:
    """One script of a corpus: its path, its corpus (directory name) and its name there."""

    path: str
    corpus: str

    @property
    def name(self) -> str:
        """``corpus/file.py``, as tables show it."""
        return f"{self.corpus}/{os.path.basename(self.path)}"


def _scripts_in(directory: str) -> list[str]:
    return sorted(p for p in glob.glob(os.path.join(glob.escape(directory), "*.py"))
                  if not os.path.basename(p).startswith(("_", ".")))


def _is_cycle(subdir: str, parent: str) -> bool:
    """Whether ``subdir`` (a symbolic link, say) is ``parent`` itself or one of its ancestors:
    following it would list the same scripts again, under another corpus name."""
    real, top = os.path.realpath(subdir), os.path.realpath(parent)
    return top == real or top.startswith(real.rstrip(os.sep) + os.sep)


def _via_link(path: str) -> bool:
    """Whether ``path`` or its directory is a symbolic link (of two paths to one script, the
    one that is not names it in tables)."""
    return os.path.islink(path) or os.path.islink(os.path.dirname(path))


def collect_scripts(paths: Sequence[str], labels: Mapping[str, Sequence[str]] | None = None
                    ) -> list[Script]:
    """The scripts of ``paths``: directories, scripts or globs of them.

    A directory with subdirectories that hold scripts is a directory of corpora (TurnkeyML's
    ``models/``; scripts directly in it, such as a generator, are not models); otherwise its
    own ``*.py`` are the corpus. ``labels`` keeps the scripts whose labels line has, for every
    key, one of the values. Raises :class:`MLProfError` naming the path for a path that does not
    exist, is not a directory or regular file, or holds no script, and for a label selection
    that matches nothing.

    Each script is taken once, by its real path: a corpus directory linked beside itself, or a
    link to a script of the corpus, is not measured twice (the path without a link names it);
    a link to the directory of corpora or above it (a cycle) is not followed. Entries of a
    corpus that are not readable scripts (a directory or FIFO named ``x.py``, a link to a
    device) are kept: :func:`run_corpus` gives each its own error row.
    """
    from mlprof.model.script import read_labels

    found: dict[str, Script] = {}
    for given in paths:
        matches = sorted(glob.glob(given)) if any(c in given for c in "*?[") else [given]
        if not matches:
            raise MLProfError("no file or directory matches", given, "PATH")
        for path in matches:
            path = os.path.abspath(path)
            try:
                mode = os.stat(path).st_mode
            except OSError as e:
                raise MLProfError(f"cannot read: {e.strerror}", path, "PATH") from None
            if stat.S_ISDIR(mode):
                subdirs = sorted(d for d in glob.glob(os.path.join(glob.escape(path), "*", ""))
                                 if not os.path.basename(d.rstrip("/")).startswith(("_", "."))
                                 and not _is_cycle(d, path) and _scripts_in(d))
                files = [f for d in subdirs for f in _scripts_in(d)] or _scripts_in(path)
                if not files:
                    raise MLProfError("holds no model script (*.py), neither directly nor in "
                                      "its subdirectories", path, "PATH")
            elif not stat.S_ISREG(mode):
                raise MLProfError("is not a regular file or directory", path, "PATH")
            elif not path.endswith(".py"):
                raise MLProfError("is not a model script (.py) or a directory", path, "PATH")
            else:
                files = [path]
            for f in files:
                f = os.path.normpath(f)
                real = os.path.realpath(f)
                if real not in found or (_via_link(found[real].path) and not _via_link(f)):
                    found[real] = Script(f, corpus_of(f))
    scripts = list(found.values())
    if labels:
        def keep(s: Script) -> bool:
            try:
                have = read_labels(s.path)
            except MLProfError:  # unreadable: kept, to be one error row of run_corpus
                return True
            return all(any(v in have.get(k, ()) for v in vals) for k, vals in labels.items())

        selected = [s for s in scripts if keep(s)]
        if not selected:
            want = " ".join(f"{k}::{','.join(v)}" for k, v in labels.items())
            raise MLProfError(f"no script of {len(scripts)} has the labels {want}",
                              field="--labels")
        scripts = selected
    return scripts


def _kind(message: str) -> str:
    """What is wrong with an unreadable script, in a word or two (the detail of its cause):
    ``FIFO``, ``device``, ``directory``, ``not text``, ``too large``, ``link loop``."""
    for text, kind in (("a FIFO", "FIFO"), ("a device", "device"), ("a directory", "directory"),
                       ("a socket", "socket"), ("not a text file", "not text"),
                       ("has at most", "too large"), ("grew beyond", "too large"),
                       ("loop of symbolic links", "link loop"), ("No such file", "missing")):
        if text in message:
            return kind
    return ""


def _short(message: str, script: str, limit: int = 160) -> str:
    """The message without the script's path (and model hash) in front: the table names the
    script."""
    import re

    message = re.sub(rf"^(?:{re.escape(script)}(?:::\w+)?: )+", "", message)
    return message if len(message) <= limit else message[:limit - 3] + "..."


def run_corpus(scripts: Sequence[Script], *, runtimes: Sequence[str] = (DEFAULT_RUNTIME,),
               batch_sizes: Sequence[int] = (1,), version: str = "corpus", workers: int = 2,
               script_args: str = "", echo: Callable[[str], None] | None = print,
               **settings: Any) -> list[dict]:
    """Discover, export and measure every script on ``runtimes`` at ``batch_sizes``.

    Returns one row per script and runtime: ``corpus``, ``script``, ``runtime``, ``status``
    (``ok``, ``skipped``, or the failure's status), ``cause`` and ``detail``
    (:func:`mlprof.report.causes.failure_cause`), ``models``, ``median_ms`` (per model, at the
    first batch size, with its marker when unstable ``~`` or contended ``!``), ``flags`` (the
    markers of any of them, :mod:`mlprof.measure.trust`) and ``reason``. ``echo`` hears one
    line per finished script and runtime.
    """
    from mlprof.api import _build, _common, _ensure_env
    from mlprof.measure.settings import check_batch_sizes
    from mlprof.model.script import read_skip
    from mlprof.runtimes import canonical_runtime
    from mlprof.tasks.discover import DiscoverModels
    from mlprof.tasks.runtime import MergeRuntimes

    _ensure_env()
    from mlprof.measure.forkserver import prestart

    # the measurement server (with torch imported) starts here, once: luigi's worker processes
    # are forks of this one and share it, instead of importing torch (~2.5 s) once per task
    prestart(torch=True)
    kw = _common({**settings, "script_args": script_args}, MergeRuntimes,
                 ("version", "model_file", "runtime", "batch_sizes"))
    batch_sizes = check_batch_sizes(batch_sizes)
    rows = _Rows([canonical_runtime(r) for r in runtimes], echo or (lambda _line: None))
    t0 = time.monotonic()

    # 1. discovery, every script at once (workers in parallel)
    todo = []
    for s in scripts:
        try:  # through mlprof.ingest: a FIFO, a device, a directory or an undecodable file
            skip = read_skip(s.path)
        except MLProfError as e:  # costs this script alone: one row, one line
            rows.unreadable(s, e)
            continue
        if skip:
            for rt in rows.runtimes:
                rows.row(s, rt, status="skipped", reason=skip)
            continue
        todo.append((s, DiscoverModels(version=version, model_file=s.path,
                                       script_args=kw.get("script_args", ""),
                                       max_depth=kw.get("max_depth", 0))))
    rows.say(f"discovering the models of {len(todo)} scripts ({workers} workers)")
    _build([t for _, t in todo if not t.complete()], workers)

    # 2. export and measurement of every discovered model
    merges = _merges(todo, rows, lambda path, rt: MergeRuntimes(
        version=version, model_file=path, runtime=rt, batch_sizes=batch_sizes, **kw))
    n_models = sum(len(m) for _, rt, m in merges if rt == rows.runtimes[0])
    rows.say(f"measuring {n_models} models on {', '.join(rows.runtimes)} at batch size(s) "
             f"{','.join(map(str, batch_sizes))} ({workers} workers; one measurement at a time)")
    pending = [t for _, _, ts in merges for t in ts if not t.complete()]
    with _watch(pending, merges, rows.say):
        _build(pending, workers)
    _read_merges(merges, rows)
    out = [rows.rows[(s.path, rt)] for s in scripts for rt in rows.runtimes]
    rows.say(f"done in {time.monotonic() - t0:.0f} s")
    return out


class _Rows:
    """:func:`run_corpus`'s table as it fills: one row per script and runtime, and one line
    for each (``say``) as it is decided."""

    def __init__(self, runtimes: list[str], say: Callable[[str], None]) -> None:
        self.runtimes, self.say = runtimes, say
        self.rows: dict[tuple[str, str], dict] = {}

    def row(self, s: Script, rt: str, **values: Any) -> None:
        """Set the row of ``s`` on ``rt``."""
        self.rows[(s.path, rt)] = {"corpus": s.corpus, "script": s.name, "runtime": rt,
                                   "status": "", "cause": "", "detail": "", "models": "",
                                   "median_ms": "", "reason": "", **values}

    def failed(self, s: Script, rt: str, task: Any) -> None:
        """``task`` of ``s`` on ``rt`` failed: its cause (:func:`failure_cause_of`)."""
        from mlprof.tasks.framework.base import failure_cause_of

        cause, message = failure_cause_of(task)
        status = cause.cause if cause.cause in ("needs-network", "needs-package", "oom",
                                                "timeout") else "failed"
        self.row(s, rt, status=status, cause=cause.cause, detail=cause.detail,
                 reason=_short(message, s.path))
        self.say(f"{s.name} {rt}: {cause}  {_short(message, s.path, 120)}")

    def unreadable(self, s: Script, error: MLProfError) -> None:
        """``s`` could not be read: a failed row on every runtime."""
        message = _short(str(error), s.path)
        for rt in self.runtimes:
            self.row(s, rt, status="failed", cause="unreadable", detail=_kind(error.message),
                     reason=message)
        self.say(f"{s.name}: unreadable: {_short(message, s.path, 120)}")

    def corrupt(self, s: Script, runtimes: Sequence[str], error: Exception,
                where: str = "") -> None:
        """A damaged file of the store (a manifest, a statistics file) costs ``s`` alone."""
        for rt in runtimes:
            self.row(s, rt, status="corrupt", cause="corrupt", reason=_short(str(error), s.path))
        self.say(f"{s.name}{where}: corrupt: {_short(str(error), s.path, 120)}")


def _merges(todo: list[tuple[Script, Any]], rows: _Rows, merge: Callable[[str, str], Any]
            ) -> list[tuple[Script, str, list]]:
    """``(script, runtime, MergeRuntimes per discovered model)`` of every script whose
    discovery ran (``merge(model_file, runtime)`` makes one); the others' rows say why not."""
    merges: list[tuple[Script, str, list]] = []
    for s, disc in todo:
        if not disc.complete():
            for rt in rows.runtimes:
                rows.failed(s, rt, disc)
            continue
        try:  # a damaged manifest (a FIFO in the store, say) costs this script alone
            hashes = [m["hash"] for m in disc.manifest()["models"]]
        except (MLProfError, KeyError, TypeError) as e:
            rows.corrupt(s, rows.runtimes, e)
            continue
        for rt in rows.runtimes:
            merges.append((s, rt, [merge(f"{s.path}::{h}", rt) for h in hashes]))
    return merges


def _read_merges(merges: list[tuple[Script, str, list]], rows: _Rows) -> None:
    """The rows of the measured scripts: each model's median at the first batch size, with
    its markers, or why it failed."""
    for s, rt, tasks in merges:
        bad = next((t for t in tasks if not t.complete()), None)
        if bad is not None:
            rows.failed(s, rt, bad)
            continue
        try:
            points = [_points(t) for t in tasks]  # each statistics file read once
        except (MLProfError, ValueError, KeyError) as e:  # a damaged statistics file
            rows.corrupt(s, [rt], e, f" {rt}")
            continue
        firsts = [(pts[0]["median_ms"], pts[0]["flags"]) for pts in points]
        rows.row(s, rt, status="ok", models=str(len(tasks)),
                 median_ms=", ".join(marked(f"{m:.3f}", f) for m, f in firsts),
                 flags=combined(f for _, f in firsts),
                 points=[p for pts in points for p in pts],
                 stats=[t.output()["stats"].path for t in tasks])


def _points(merge: Any) -> list[dict]:
    """Every batch size of a complete MergeRuntimes: ``model``, ``batch_size``, ``median_ms``
    (per call), ``throughput`` (events/s at the median) and ``flags`` (trust markers)."""
    from mlprof.measure.stats import read_stats_csv

    st = read_stats_csv(merge.output()["stats"].path)
    n = len(st["batch_size"])
    unstable = st.get("unstable", [False] * n)
    contended = st.get("contended", [False] * n)
    return [{"model": merge.resolved_model_name, "batch_size": int(st["batch_size"][i]),
             "median_ms": float(st["median_ms"][i]), "throughput": float(st["throughput"][i]),
             "flags": marks(unstable[i], contended[i])} for i in range(n)]


def results_table(rows: Sequence[Mapping[str, Any]]) -> tuple[list[dict], list[str], list[str]]:
    """The measured results of :func:`run_corpus`'s rows as table rows: one per model and
    runtime, a column per batch size (``bs 8``: the median latency per call in ms, with its
    trust markers). Returns the rows, the columns and the markers shown (for the legend)."""
    sizes = sorted({p["batch_size"] for r in rows for p in r.get("points") or ()})
    out: dict[tuple[str, str, str], dict] = {}
    shown: list[str] = []
    for r in rows:
        for p in r.get("points") or ():
            key = (r["script"], p["model"], r["runtime"])
            line = out.setdefault(key, {"script": r["script"], "model": p["model"],
                                        "runtime": r["runtime"]})
            line[f"bs {p['batch_size']}"] = marked(f"{p['median_ms']:.4g}", p["flags"])
            shown.append(p["flags"])
    cols = ["script", "model", "runtime", *(f"bs {b}" for b in sizes)]
    return list(out.values()), cols, shown


def _first_median(merge: Any) -> tuple[float, str]:
    """The median latency (ms) at the first batch size of a complete MergeRuntimes, and its
    trust markers (:mod:`mlprof.measure.trust`: ``~`` unstable, ``!`` contended)."""
    first = _points(merge)[0]
    return first["median_ms"], first["flags"]


@contextlib.contextmanager
def _watch(pending: list, merges: list, say: Callable[[str], None]) -> Iterator[None]:
    """Print a line when one of ``pending`` MergeRuntimes tasks succeeds (luigi's events fire
    in the process that ran the task, a fork of this one, hence the shared counter)."""
    import multiprocessing

    import luigi

    from mlprof.tasks.runtime import MergeRuntimes

    names = {t.task_id: (s.name, rt) for s, rt, ts in merges for t in ts}
    counter = multiprocessing.Value("i", 0)
    total = len(pending)

    def _done(task: Any) -> None:
        if task.task_id not in names:
            return
        with counter.get_lock():
            counter.value += 1
            n = counter.value
        name, rt = names[task.task_id]
        try:
            first, flags = _first_median(task)
            median = marked(f"{first:.3f} ms", flags)
        except Exception:  # noqa: BLE001 - a progress line only
            median = ""
        say(f"[{n}/{total}] {name} {rt}: ok {median}".rstrip())

    # luigi's registry of handlers is global: registered for this run only
    MergeRuntimes.event_handler(luigi.Event.SUCCESS)(_done)
    try:
        yield
    finally:
        MergeRuntimes._event_callbacks.get(MergeRuntimes, {}).get(
            luigi.Event.SUCCESS, set()).discard(_done)
