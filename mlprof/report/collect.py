"""Collect every measurement in one or more stores into one tidy table.

One row per MeasureRuntime branch (model, runtime, settings, batch size, version): its
statistics, provenance and status. A branch that failed (``_failure_bs_<N>.json``) is a row too,
with status ``failed``, ``timeout``, ``oom``, ``needs-network`` or ``needs-package`` and the
error message, so failures never vanish; so is a model script whose discovery or export failed
(``stage`` ``discovery`` or ``export``, no batch size: nothing was measured).

A damaged record never stops the report: a branch whose files do not validate
(:func:`mlprof.measure.results.read_branch`), a failure record that is no JSON object, a file
named like a result but not one, each becomes one row with status ``corrupt`` and the error
``"<file>: <what is wrong>"``; everything else is reported. Corrupt rows are not measurements:
the history and the alerts skip them (they keep ``status == "ok"`` rows only).

Stores are read once each, however they are given (a trailing ``/``, a symbolic link, a bind
mount), and a result found in several stores (a mirror copy) is one row
(:data:`RESULT_IDENTITY`).
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path

from mlprof import ingest
from mlprof.errors import CorruptResult, MLProfError
from mlprof.measure.contention import causes_of, is_contended
from mlprof.measure.results import (
    events_per_call,
    precision_error,
    read_branch,
    read_failure,
)
from mlprof.measure.stats import ERROR_COLUMNS, STAT_COLUMNS, summarize
from mlprof.progress import Progress
from mlprof.results import layout, records

logger = logging.getLogger("mlprof")

#: columns of the report, in order
REPORT_COLUMNS = [
    "status", "error", "cause", "cause_detail", "corpus", "model", "label", "model_hash",
    "model_file",
    "runtime", "runtime_version",
    "device", "cpu_model", "host", "threads", "batch_size",
    *[c for c in STAT_COLUMNS if c != "batch_size" and c not in ERROR_COLUMNS],
    "n_calls", "n_events", "warmup", "min_duration", "input_data",
    "precision", "max_abs_error", "max_rel_error", "top1_agreement", "top5_agreement",
    "error_note", "isa", "host_fingerprint",
    "session_creation_ms", "first_call_ms", "compile_s", "compile_cache", "compile_mode",
    "peak_rss_mb",
    "other_cpu_cores", "contended_causes", "version", "timestamp", "git_commit",
    records.MLPROF_VERSION,
    "settings_key", "stage", "store", "path",
]

#: the statuses of a row: a result, a failed measurement, a damaged record
STATUSES = ("ok", "failed", "timeout", "oom", "needs-network", "needs-package", "corrupt")

#: what makes two rows the same result (the same result in two stores, e.g. a mirror, is one)
RESULT_IDENTITY = ["model", "model_hash", "runtime", "runtime_version", "device",
                   "settings_key", "version", "batch_size", "host"]

#: tasks before the measurement whose failures are rows too, and their stage
UPSTREAM_STAGES = (("DiscoverModels", "discovery"), ("ExportOnnx", "export"))


def _split(path: Path, store: Path) -> dict:
    """Model, runtime, settings and version of a result file (parsed by
    :mod:`mlprof.results.layout`)."""
    rp = layout.parse_result_path(str(path), str(store))
    seg = rp.parsed()
    return {"model": seg["model"], "model_hash": seg.get("model_hash"),
            "runtime": seg.get("runtime", ""), "runtime_version": seg.get("runtime_version") or "",
            "device": seg.get("device"), "settings_key": rp.segments.get("settings"),
            "version": rp.version}


def _result_files(store: Path, task: str, pattern: str) -> list[Path]:
    """Files named like ``pattern`` in the version directories of ``task`` (by its layout)."""
    depth = len(layout.LAYOUTS[task]) + 1
    return sorted((store / task).glob("/".join(["*"] * depth + [pattern])))


def _mtime(path: Path) -> str | None:
    try:
        return datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc
                                               ).isoformat(timespec="seconds")
    except OSError:
        return None


def _loose_json(path: Path) -> object:
    """Whatever JSON ``path`` holds (None if none): where a damaged record is, its host and
    time are worth showing when they are readable."""
    try:  # through mlprof.ingest: a FIFO or a device there is no record, never a hang
        return json.loads(ingest.read_bytes(path, ingest.MAX_RECORD_BYTES))
    except (MLProfError, ValueError, RecursionError):
        return None


def corrupt_row(path: Path, store: Path, error: CorruptResult, *, stage: str = "measure",
                batch_size: int | None = None, prov: object = None) -> dict:
    """The row of a damaged record: where it is (from its path), ``status`` ``corrupt`` and
    ``error`` ``"<file>: <what is wrong>"``; the host and timestamp of its provenance when
    that much is readable, else the file's modification time."""
    try:
        row = _split(path, store)
    except ValueError:
        row = {"model": path.parent.name, "version": None}
    prov = prov if isinstance(prov, dict) else {}
    host, ts = prov.get("host"), prov.get("timestamp")
    row.update(status="corrupt", error=str(error), batch_size=batch_size,
               host=host if isinstance(host, str) else None,
               timestamp=ts if isinstance(ts, str) else _mtime(path),
               stage=stage, store=str(store), path=str(path))
    return row


def _branch_row(js: Path, store: Path) -> dict:
    """The row of one branch (its provenance file ``js``): ``ok`` or ``corrupt``."""
    parsed = layout.parse_branch_file(js.name)
    if parsed is None:
        return corrupt_row(js, store, CorruptResult(
            "named like a MeasureRuntime result but not one (expected "
            f"{layout.branch_files(1)['json'].replace('1', '<N>')})", js))
    bs = parsed[0]
    csv_path = js.parent / layout.branch_files(bs)["csv"]
    if not csv_path.exists():
        return corrupt_row(js, store, CorruptResult(
            f"is missing (its provenance {js.name} is there)", csv_path), batch_size=bs)
    try:
        samples, prov = read_branch(csv_path, js)
    except CorruptResult as e:
        return corrupt_row(js, store, e, batch_size=bs, prov=_loose_json(js))
    rec = records.BranchRecord.from_json(prov, str(js))  # checked by read_branch already
    h, s = rec.header, rec.settings
    row = _split(js, store)
    row.update(summarize(samples, rec.batch_size, rec.contended,
                         events_per_call=events_per_call(prov)))
    env = h.environment or {}
    ident = records.model_identity(prov, row["model"], row.get("model_hash"))
    row.update(
        status="ok", error="", model=ident.name, label=ident.label, model_file=ident.file,
        runtime_version=(h.runtime_version if "runtime_version" in prov
                         else row["runtime_version"]),
        cpu_model=h.cpu_model, host=h.host,
        # the machine's fingerprint id: which noise floor the point is judged by (None in
        # records from before the noise floor)
        host_fingerprint=h.host_fingerprint,
        threads=h.threads, n_calls=s.get("n_calls"),
        n_events=s.get("n_events"), warmup=s.get("warmup"),
        min_duration=s.get("min_duration"), input_data=s.get("input_data"),
        session_creation_ms=rec.session_creation_ms,
        first_call_ms=rec.first_call_ms, compile_s=rec.compile_s,
        compile_cache=rec.compile_cache, compile_mode=rec.compile_mode,
        peak_rss_mb=h.peak_rss_mb,
        other_cpu_cores=env.get("other_cpu_cores"),
        # what disturbed a contended point (mlprof.measure.causes), comma-separated
        contended_causes=",".join(causes_of(prov)) if is_contended(prov) else "",
        timestamp=h.timestamp, git_commit=h.git_commit,
        mlprof_version=h.mlprof_version if records.MLPROF_VERSION in prov else None,
        store=str(store), path=str(js), stage="measure", **_precision_fields(h))
    return row


def _precision_fields(header: records.Header) -> dict:
    """The precision measured at, its error against fp32 (None at fp32, and where a record
    holds no number) and the CPU's instruction sets, as report columns."""
    from mlprof.model.precision import error_note, error_number

    precision = header.precision or {}
    error = precision_error({"precision": precision})
    return {"precision": str(precision.get("precision") or "fp32"),
            **{k: error_number(error, k) for k in ("max_abs_error", "max_rel_error",
                                                   "top1_agreement", "top5_agreement")},
            "error_note": error_note(error) or None,
            "isa": ", ".join(header.isa) if header.isa is not None else None}


def _failure_row(fail: Path, store: Path) -> dict | None:
    """The row of a branch's failure record (None: the branch succeeded later)."""
    bs = layout.parse_branch_failure(fail.name)
    if bs is None:
        return corrupt_row(fail, store, CorruptResult(
            "named like a failure record but not one of a batch size (expected "
            f"{layout.branch_failure_file(1).replace('1', '<N>')})", fail))
    if (fail.parent / layout.branch_files(bs)["json"]).exists():
        return None  # succeeded later (the result's own row says whether it is valid)
    try:
        rec = read_failure(fail)
    except CorruptResult as e:
        return corrupt_row(fail, store, e, batch_size=bs)
    row = _split(fail, store)
    row.update(status=rec.get("status", "failed"), error=rec.get("message", ""),
               model_file=rec.get("model_file"),
               batch_size=bs, timestamp=rec.get("time"), store=str(store),
               path=str(fail), stage="measure")
    return row


def unique_stores(stores: Iterable[str | os.PathLike]) -> list[Path]:
    """``stores`` resolved (``~``, symbolic links), each once: by its real path and by its
    directory's device and inode (a bind mount of a store is the same store)."""
    out: list[Path] = []
    seen: set = set()
    for store in stores:
        path = Path(os.path.realpath(os.path.expanduser(os.fspath(store))))
        try:
            st = path.stat()
            inode = (st.st_dev, st.st_ino)
        except OSError:
            inode = None
        if str(path) in seen or (inode is not None and inode in seen):
            continue
        seen.update({str(path), inode} - {None})
        out.append(path)
    return out


_RANK = {"ok": 0, "corrupt": 2}  # a failure: 1


def unique_rows(rows: list[dict]) -> list[dict]:
    """One row per :data:`RESULT_IDENTITY`: a result found in several stores (a mirror copy)
    counts once; of the copies, a valid one wins over a failure over a damaged one, then the
    first store given. Damaged records are told apart by their file's place in the store too
    (two damaged files of one result directory are two rows)."""
    best: dict[tuple, int] = {}
    out: list[dict] = []
    for row in rows:
        key = tuple(row.get(k) for k in RESULT_IDENTITY)
        if row["status"] == "corrupt":
            key += (os.path.relpath(row["path"], row["store"]),)
        i = best.get(key)
        if i is None:
            best[key] = len(out)
            out.append(row)
        elif _RANK.get(row["status"], 1) < _RANK.get(out[i]["status"], 1):
            out[i] = row
    dropped = len(rows) - len(best)
    if dropped:
        logger.info("report: %d row(s) found in more than one store counted once", dropped)
    return out


def collect(stores: Iterable[str | os.PathLike],
            progress: Progress | None = None) -> list[dict]:
    """All measurement rows of ``stores`` (each a $MLP_STORE directory); never raises on a
    damaged record (it becomes a ``corrupt`` row). ``progress`` hears ``reading the store
    <store>: k of n records`` (:func:`mlprof.progress.speaking`)."""
    rep = progress or Progress(None)
    rows: list[dict] = []
    for store in unique_stores(stores):
        rows.extend(_upstream_failures(store))
        files = _result_files(store, "MeasureRuntime", layout.BRANCH_JSON_GLOB)
        rep.phase(f"reading the store {store}")
        for k, js in enumerate(files, 1):
            rows.append(_branch_row(js, store))
            rep.update(f"reading the store {store}: {k:,} of {len(files):,} records")
        for fail in _result_files(store, "MeasureRuntime", layout.BRANCH_FAILURE_GLOB):
            row = _failure_row(fail, store)
            if row is not None:
                rows.append(row)
    return [_with_cause(r) for r in unique_rows(rows)]


def collect_precisions(stores: Iterable[str | os.PathLike]) -> list[dict]:
    """The rows of every ComparePrecisions table in ``stores`` (speed-up over fp32 with its
    interval, the error, and why a precision is not faster), each with its model, runtime,
    settings, version, file and the file's time (``mtime``). A damaged table is logged and
    left out, never read as numbers (:func:`mlprof.report.precision.read_precision_table`)."""
    from mlprof.report.precision import read_precision_table

    out: list[dict] = []
    for store in unique_stores(stores):
        for path in _result_files(store, "ComparePrecisions", "precisions_*.csv"):
            try:
                rows = read_precision_table(path)
                mtime = path.stat().st_mtime
                where = _split(path, store)
            except (CorruptResult, OSError, ValueError) as e:  # ValueError: a path off the layout
                logger.warning("%s", e)
                continue
            out += [{**where, **r, "path": str(path), "mtime": mtime} for r in rows]
    return out


def collect_loads(stores: Iterable[str | os.PathLike]) -> list[dict]:
    """One row per MeasureLoad record in ``stores``: its model, runtime, settings and version,
    the load point (``point``, its file tag), the configuration, the chosen point's
    throughput and latency, whether any point was contended, and the answer in one line
    (:func:`mlprof.report.load.answer`). A damaged record costs only its row: it is logged in
    one line naming the file and the field (:func:`mlprof.measure.loadgen.record.read_load`,
    which checks every field the row is made of) and left out, never read as numbers."""
    out: list[dict] = []
    for store in unique_stores(stores):
        for path in _result_files(store, "MeasureLoad", "load_*.json"):
            try:
                out.append(_load_row(path, store))
            except (CorruptResult, OSError, ValueError) as e:  # ValueError: a path off the layout
                logger.warning("%s", e)
    return out


def _load_row(path: Path, store: Path) -> dict:
    """The row of one load record (:func:`collect_loads`); a :class:`CorruptResult` naming
    the file and the field for a record that does not read."""
    from mlprof.measure.loadgen import read_load
    from mlprof.report.load import answer, config_label, no_rate_lines, points_table

    data = read_load(str(path))  # every field checked: what follows formats checked values
    rec = records.LoadRecord.from_json(data, str(path))
    mtime = path.stat().st_mtime
    where = _split(path, store)
    df = points_table([data])
    chosen = df[df["chosen"]]
    best = chosen.iloc[0] if len(chosen) else None
    first = df.iloc[0] if len(df) else None
    return {
        **where, "point": path.stem.removeprefix("load_"),
        "scenario": rec.load.scenario,
        "config": config_label(first) if first is not None else "",
        "events_per_s": None if best is None else best["events_per_s"],
        "p99_ms": None if best is None else best["p99_ms"],
        "latency_bound_ms": rec.load.latency_bound_ms,
        "p50_ms": None if best is None else best["p50_ms"],
        "points": len(df), "contended": bool(df["contended"].any()) if len(df) else False,
        # what disturbed the contended points (their causes, in the order first named)
        "causes": ",".join(dict.fromkeys(c for v in df["causes"] for c in str(v).split(",")
                                         if c)) if len(df) else "",
        "host": rec.header.host, "timestamp": rec.header.timestamp,
        "answer": answer(df, no_rate_lines([data])),
        "path": str(path), "mtime": mtime}


def collect_generations(stores: Iterable[str | os.PathLike]) -> list[dict]:
    """One row per runtime of every MeasureGeneration record in ``stores``
    (:func:`mlprof.report.generation.record_rows`): its model, settings, version and point,
    the runtime's median TTFT, TPOT and decode tokens/s with their 95 % intervals, its TPOT
    speed-up against the reference, its teacher-forced agreement and whether the point was
    contended (and by what). A damaged record costs only its rows: it is logged in one line
    naming the file and the field (:class:`mlprof.results.records.GenerationRecord`, which
    checks every field the rows are made of) and left out, never read as numbers."""
    out: list[dict] = []
    for store in unique_stores(stores):
        for path in _result_files(store, "MeasureGeneration", "generation_*.json"):
            try:
                out.extend(_generation_rows(path, store))
            except (CorruptResult, OSError, ValueError) as e:  # ValueError: off the layout
                logger.warning("%s", e)
    return out


def _generation_rows(path: Path, store: Path) -> list[dict]:
    """The rows of one generation record (:func:`collect_generations`); a
    :class:`CorruptResult` naming the file and the field for a record that does not read."""
    from mlprof.measure.generation.run import read_generation
    from mlprof.report.generation import record_rows

    if layout.parse_generation_failure(path.name) is None and not re.fullmatch(
            r"generation_p\d+_bs\d+\.json", path.name):
        raise CorruptResult("named like a MeasureGeneration record but not one (expected "
                            "generation_p<prompt>_bs<batch>.json)", str(path))
    data = read_generation(str(path))  # every field checked: the rows format checked values
    mtime = path.stat().st_mtime
    where = _split(path, store)
    return [{**where, **row, "path": str(path), "mtime": mtime} for row in record_rows(data)]


def _with_cause(row: dict) -> dict:
    """``row`` with its corpus (the model file's directory) and, for a failure, its cause
    (:func:`mlprof.report.causes.failure_cause`)."""
    from mlprof.report.causes import corpus_of, failure_cause

    model_file = row.get("model_file")
    if not model_file and row.get("status") != "ok":  # a record older than its model_file
        m = re.search(r"(/\S+?\.py)(?:::\w+)?:", str(row.get("error") or ""))
        model_file = row["model_file"] = m.group(1) if m else None
    row["corpus"] = corpus_of(model_file) if isinstance(model_file, str) and model_file else ""
    if row.get("status") != "ok":
        cause = failure_cause(str(row.get("status")), str(row.get("error") or ""),
                              str(row.get("stage") or ""))
        row["cause"], row["cause_detail"] = cause.cause, cause.detail
    return row


def script_rows(df) -> list[dict]:
    """One row per model file (script) and version of a report: ``ok`` when every runtime and
    batch size of it was measured, else the first failure's status, cause and detail; the
    input of :func:`mlprof.report.causes.format_summary`."""
    out: list[dict] = []
    if df.empty:
        return out
    files = df["model_file"].fillna(df["model"]).astype(str).str.split("::").str[0]
    for (file, _version), g in df.assign(_file=files).groupby(["_file", "version"],
                                                             dropna=False, sort=True):
        bad = g[g["status"] != "ok"]
        first = bad.iloc[0] if len(bad) else None
        out.append({"corpus": str(g["corpus"].iloc[0] or ""), "script": file,
                    "flags": _script_flags(g[g["status"] == "ok"]),
                    "status": "ok" if first is None else str(first["status"]),
                    "cause": "" if first is None else str(first["cause"] or ""),
                    "detail": "" if first is None else str(first["cause_detail"] or "")})
    return out


def _script_flags(ok) -> str:
    """The trust markers of a script's measured points (``ok``, report rows), together: ``~!``
    when one is unstable and one contended (:mod:`mlprof.measure.trust`)."""
    from mlprof.measure.trust import combined, marks

    return combined(marks(u, c) for u, c in zip(ok["unstable"], ok["contended"], strict=True))


def _upstream_failures(store: Path) -> list[dict]:
    """Discovery and export failures: nothing was measured, so they have no batch size.

    The runtime is that of every runtime the failed stage stops: all of them for a discovery,
    those that measure the export for an export.
    """
    from mlprof.runtimes import runtime_info, runtime_names

    stops = {"discovery": runtime_names(),
             "export": [n for n in runtime_names() if runtime_info(n).needs_export]}
    rows = []
    for task, stage in UPSTREAM_STAGES:
        for fail in _result_files(store, task, layout.FAILURE_FILE):
            try:
                rp = layout.parse_result_path(str(fail), str(store))
                seg = rp.parsed()
            except ValueError:
                continue  # not in the layout: not a record of this store
            runtime = ",".join(stops[stage]) if stage == "export" else ""
            try:
                rec = read_failure(fail)
            except CorruptResult as e:
                row = corrupt_row(fail, store, e, stage=stage)
                row.update(runtime=runtime, runtime_version="", device="")
                rows.append(row)
                continue
            rows.append({"status": rec.get("status", "failed"), "error": rec.get("message", ""),
                         "model": seg["model"], "model_hash": seg["model_hash"],
                         "model_file": rec.get("model_file"), "runtime": runtime,
                         "runtime_version": "", "device": "",
                         "settings_key": rp.segments["settings"], "version": rp.version,
                         "timestamp": rec.get("time"), "stage": stage, "store": str(store),
                         "path": str(fail)})
    return rows


def to_frame(rows: list[dict]):
    """The rows as a pandas DataFrame with :data:`REPORT_COLUMNS` in order."""
    import pandas as pd

    df = pd.DataFrame(rows, columns=REPORT_COLUMNS)
    return df.sort_values(["model", "runtime", "settings_key", "version", "batch_size"],
                          kind="stable", ignore_index=True)
