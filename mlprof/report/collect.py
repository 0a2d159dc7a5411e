"""Collect every measurement in one or more stores into one tidy table.

One row per MeasureRuntime branch (model, runtime, settings, batch size, version): its
statistics, provenance and status. A branch that failed (``_failure_bs_<N>.json``) is a row too,
with status ``failed``, ``timeout`` or ``oom`` and the error message, so failures never vanish;
so is a model script whose discovery or export failed (``stage`` ``discovery`` or ``export``,
no batch size: nothing was measured).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from mlprof import layout
from mlprof.measure.stats import STAT_COLUMNS, read_runtimes, summarize

#: columns of the report, in order
REPORT_COLUMNS = [
    "status", "error", "model", "model_hash", "model_file", "runtime", "runtime_version",
    "device", "cpu_model", "host", "threads", "batch_size",
    *[c for c in STAT_COLUMNS if c != "batch_size"],
    "n_calls", "n_events", "warmup", "min_duration", "input_data",
    "session_creation_ms", "first_call_ms", "peak_rss_mb",
    "version", "timestamp", "git_commit", "mlprof_version", "settings_key", "stage", "store",
    "path",
]

#: tasks before the measurement whose failures are rows too, and their stage
UPSTREAM_STAGES = (("DiscoverModels", "discovery"), ("ExportOnnx", "export"))


def _split(path: Path, store: Path) -> dict:
    """Model, runtime, settings and version of a result file, parsed by :mod:`mlprof.layout`."""
    rp = layout.parse_result_path(str(path), str(store))
    seg = rp.parsed()
    return {"model": seg["model"], "model_hash": seg["model_hash"], "runtime": seg["runtime"],
            "runtime_version": seg["runtime_version"] or "", "device": seg["device"],
            "settings_key": rp.segments["settings"], "version": rp.version}


def _result_files(store: Path, task: str, pattern: str) -> list[Path]:
    """Files named like ``pattern`` in the version directories of ``task`` (by its layout)."""
    depth = len(layout.LAYOUTS[task]) + 1
    return sorted((store / task).glob("/".join(["*"] * depth + [pattern])))


def collect(stores: Iterable[str | os.PathLike]) -> list[dict]:
    """All measurement rows of ``stores`` (each a $MLP_STORE directory)."""
    rows: list[dict] = []
    for store in stores:
        store = Path(store).resolve()
        rows.extend(_upstream_failures(store))
        for js in _result_files(store, "MeasureRuntime", layout.BRANCH_JSON_GLOB):
            parsed = layout.parse_branch_file(js.name)
            if parsed is None:
                continue
            csv_path = js.parent / layout.branch_files(parsed[0])["csv"]
            if not csv_path.exists():
                continue
            try:
                with open(js) as f:
                    prov = json.load(f)
                samples = read_runtimes(csv_path)
            except (OSError, ValueError) as e:
                row = _split(js, store)
                row.update(status="failed", error=f"unreadable result: {e}", store=str(store),
                           path=str(js), stage="measure")
                rows.append(row)
                continue
            s = prov.get("settings", {})
            row = _split(js, store)
            row.update(summarize(samples, s["batch_size"]))
            task = prov.get("task", {})
            row.update(
                status="ok", error="", model=task.get("model_name", row["model"]),
                model_file=task.get("model_file", prov["model"].get("spec_file")),
                runtime_version=prov.get("runtime_version", row["runtime_version"]),
                cpu_model=prov.get("cpu_model"), host=prov.get("host"),
                threads=prov.get("threads"), n_calls=s.get("n_calls"),
                n_events=s.get("n_events"), warmup=s.get("warmup"),
                min_duration=s.get("min_duration"), input_data=s.get("input_data"),
                session_creation_ms=prov.get("session_creation_ms"),
                first_call_ms=prov.get("first_call_ms"), peak_rss_mb=prov.get("peak_rss_mb"),
                timestamp=prov.get("timestamp"), git_commit=prov.get("git_commit"),
                mlprof_version=prov.get("mlprof_version"), store=str(store), path=str(js),
                stage="measure")
            rows.append(row)
        for fail in _result_files(store, "MeasureRuntime", layout.BRANCH_FAILURE_GLOB):
            bs = layout.parse_branch_failure(fail.name)
            if bs is None:
                continue
            if (fail.parent / layout.branch_files(bs)["json"]).exists():
                continue  # succeeded later
            with open(fail) as f:
                rec = json.load(f)
            row = _split(fail, store)
            row.update(status=rec.get("status", "failed"), error=rec.get("message", ""),
                       batch_size=bs, timestamp=rec.get("time"), store=str(store),
                       path=str(fail), stage="measure")
            rows.append(row)
    return rows


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
                with open(fail) as f:
                    rec = json.load(f)
                rp = layout.parse_result_path(str(fail), str(store))
            except (OSError, ValueError):
                continue
            seg = rp.parsed()
            rows.append({"status": rec.get("status", "failed"), "error": rec.get("message", ""),
                         "model": seg["model"], "model_hash": seg["model_hash"],
                         "runtime": ",".join(stops[stage]) if stage == "export" else "",
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
