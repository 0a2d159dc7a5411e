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

from mlprof.measure.stats import STAT_COLUMNS, read_runtimes, summarize
from mlprof.runtimes import RUNTIMES

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

#: tasks before the measurement whose failures are rows too: (task directory, stage, runtime
#: the failure stops; "" for all)
UPSTREAM_STAGES = (("DiscoverModels", "discovery", ""), ("ExportOnnx", "export", "onnxruntime"))


def _split(path: Path, store: Path) -> dict:
    """Store segments of a MeasureRuntime output: model, runtime, settings, version."""
    rel = path.relative_to(store).parts
    # MeasureRuntime/<model>__<hash>/<runtime>-<ver>__<device>/<settings>/<version>/<file>
    model_seg, runtime_seg, settings, version = rel[1], rel[2], rel[3], rel[4]
    model, _, mhash = model_seg.rpartition("__")
    rt, _, device = runtime_seg.rpartition("__")
    # "<runtime>-<version>": runtime names may hold dashes, so match the known names
    runtime = max((n for n in RUNTIMES if rt.startswith(n + "-")), key=len,
                  default=rt.partition("-")[0])
    rt_version = rt[len(runtime) + 1:]
    return {"model": model, "model_hash": mhash, "runtime": runtime,
            "runtime_version": rt_version, "device": device, "settings_key": settings,
            "version": version}


def collect(stores: Iterable[str | os.PathLike]) -> list[dict]:
    """All measurement rows of ``stores`` (each a $MLP_STORE directory)."""
    rows: list[dict] = []
    for store in stores:
        store = Path(store).resolve()
        rows.extend(_upstream_failures(store))
        base = store / "MeasureRuntime"
        if not base.is_dir():
            continue
        for js in sorted(base.glob("*/*/*/*/runtime_bs_*.json")):
            csv_path = js.with_suffix(".csv")
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
        for fail in sorted(base.glob("*/*/*/*/_failure_bs_*.json")):
            bs = int(fail.stem.rsplit("_", 1)[1])
            if (fail.parent / f"runtime_bs_{bs}.json").exists():
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
    """Discovery and export failures: nothing was measured, so they have no batch size."""
    rows = []
    for task, stage, runtime in UPSTREAM_STAGES:
        # <Task>/<model>__<hash>/<settings>/<version>/_failure.json
        for fail in sorted((store / task).glob("*/*/*/_failure.json")):
            try:
                with open(fail) as f:
                    rec = json.load(f)
            except (OSError, ValueError):
                continue
            model_seg, settings, version = fail.relative_to(store).parts[1:4]
            model, _, mhash = model_seg.rpartition("__")
            rows.append({"status": rec.get("status", "failed"), "error": rec.get("message", ""),
                         "model": model, "model_hash": mhash, "runtime": runtime,
                         "runtime_version": "", "device": "", "settings_key": settings,
                         "version": version, "timestamp": rec.get("time"), "stage": stage,
                         "store": str(store), "path": str(fail)})
    return rows


def to_frame(rows: list[dict]):
    """The rows as a pandas DataFrame with :data:`REPORT_COLUMNS` in order."""
    import pandas as pd

    df = pd.DataFrame(rows, columns=REPORT_COLUMNS)
    return df.sort_values(["model", "runtime", "settings_key", "version", "batch_size"],
                          kind="stable", ignore_index=True)
