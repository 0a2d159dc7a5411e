"""Result files of a measurement: one batch size's samples and provenance, and the merged
statistics of a sweep (no law import: the tasks only say where the files go)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from mlprof.measure.stats import CV_UNSTABLE, read_runtimes, summarize, write_stats_csv
from mlprof.util import atomic_path, write_json_atomic, write_text_atomic


def write_branch(result: Any, paths: Mapping[str, str], *, task: Mapping[str, Any],
                 batch_job: Mapping[str, Any] | None = None,
                 script: Mapping[str, Any] | None = None,
                 export_record_file: str | None = None) -> dict:
    """Write one batch size's raw samples (``paths["csv"]``) and provenance (``paths["json"]``).

    The provenance is the harness' record plus where it ran (``batch_job``), which task and
    parameters asked for it (``task``: enough to measure it again), the script's arguments
    (``script``) and the export record of an exported script model. The JSON is written last:
    a branch counts as complete only when both files exist. Returns the provenance.
    """
    prov = result.provenance
    prov["batch_job"] = dict(batch_job) if batch_job else None
    prov["task"] = dict(task)
    if script is not None:
        prov["script"] = dict(script)
    if export_record_file is not None:
        with open(export_record_file) as f:
            prov["export"] = json.load(f)
    write_text_atomic(paths["csv"], result.csv_text())
    write_json_atomic(paths["json"], prov)
    return prov


def merge_branches(branches: Sequence[Mapping[str, str]], outputs: Mapping[str, str],
                   meta: Mapping[str, Any]) -> list[dict]:
    """Merge MeasureRuntime's branch files into ``outputs``: ``raw`` (all samples under one
    header), ``stats`` (one row per batch size) and ``provenance`` (``meta`` plus every
    branch's record under ``measurements``). Returns the statistics rows."""
    provs, rows = [], []
    for b in branches:
        with open(b["json"]) as f:
            prov = json.load(f)
        provs.append(prov)
        rows.append(summarize(read_runtimes(b["csv"]), prov["settings"]["batch_size"]))
    with atomic_path(outputs["raw"]) as tmp, open(tmp, "w") as out:
        for i, b in enumerate(branches):
            with open(b["csv"]) as f:
                header = f.readline()
                if i == 0:
                    out.write(header)
                out.write(f.read())
    with atomic_path(outputs["stats"]) as tmp:
        write_stats_csv(tmp, rows)
    write_json_atomic(outputs["provenance"], {**meta, "measurements": provs})
    return rows


def unstable_warning(name: str, rows: Sequence[Mapping[str, Any]]) -> str | None:
    """A warning naming the batch sizes whose CV exceeds :data:`CV_UNSTABLE` (None if none)."""
    unstable = [r for r in rows if r["unstable"]]
    if not unstable:
        return None
    sizes = ", ".join(str(r["batch_size"]) for r in unstable)
    cvs = ", ".join(f"{100 * r['cv']:.0f}%" for r in unstable)
    return (f"{name}: unstable measurement (CV > {100 * CV_UNSTABLE:.0f}%) at batch size(s) "
            f"{sizes} (CV {cvs}); the median and "
            "percentiles are robust, mean and std are not: consider a larger --min-duration or "
            "a quieter machine")


def measured_versions(provenance_file: str | os.PathLike) -> list[str]:
    """The runtime versions a merged sweep was measured with (as recorded, in order, unique)."""
    with open(provenance_file) as f:
        prov = json.load(f)
    versions = [str(m.get("runtime_version") or "") for m in prov.get("measurements", [])]
    return [v for v in dict.fromkeys(versions) if v]
