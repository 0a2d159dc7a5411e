"""Result files of a measurement: one batch size's samples and provenance, and the merged
statistics of a sweep (no law import: the tasks only say where the files go).

A branch's files are read, everywhere, by :func:`read_branch`, which accepts them only when they
agree with each other: see :func:`read_provenance` and :func:`read_samples` for what is checked.
A damaged file raises :class:`~mlprof.errors.CorruptResult` naming the file and what is wrong.
"""

from __future__ import annotations

import copy
import io
import json
import os
import re
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:  # numpy on first use: law run's summary reads provenance only (0.1-0.2 s)
    import numpy as np

from mlprof import ingest
from mlprof.errors import CorruptResult, MLProfError
from mlprof.measure.contention import causes_of, is_contended
from mlprof.measure.stats import (
    CV_UNSTABLE,
    MAX_SAMPLE_MS,
    RAW_COLUMNS,
    summarize,
    write_stats_csv,
)
from mlprof.results import layout, records
from mlprof.util import atomic_path, write_json_atomic, write_text_atomic

__all__ = ["CorruptResult", "branch_problem", "events_per_call", "merge_branches",
           "read_branch", "read_checked_branch", "read_failure", "read_provenance",
           "read_samples", "write_branch"]

#: the raw CSV's header line, exactly
RAW_HEADER = ",".join(RAW_COLUMNS)

#: the largest raw CSV of one branch read (a million samples are about 25 MB)
MAX_SAMPLES_BYTES = 1 << 30

_NUMBER = (int, float)
#: provenance fields the report copies, and their types (checked when present and not null;
#: ``int`` excludes ``bool``)
PROVENANCE_TYPES: dict[str, tuple[type, ...]] = {
    "runtime": (str,), "runtime_version": (str,), "device": (str,), "host": (str,),
    "cpu_model": (str,), "threads": (int,), "timestamp": (str,), "git_commit": (str,),
    records.MLPROF_VERSION: (str,), "session_creation_ms": _NUMBER, "first_call_ms": _NUMBER,
    "compile_s": _NUMBER, "compile_cache": (str,),
    "peak_rss_mb": _NUMBER, "model": (dict,), "task": (dict,), "environment": (dict,),
}
#: the numbers of ``environment`` (mlprof.measure.contention; absent in older records)
ENVIRONMENT_TYPES: dict[str, tuple[type, ...]] = {
    "window_s": _NUMBER, "other_cpu_cores": _NUMBER, "own_cpu_cores": _NUMBER,
    "steal_share": _NUMBER, "cpu_mhz": _NUMBER,
}
SETTINGS_TYPES: dict[str, tuple[type, ...]] = {
    "n_calls": (int,), "n_events": (int,), "warmup": (int,), "min_duration": _NUMBER,
    "input_data": (str,), "threads": (int,), "runtime": (str,), "device": (str,),
}
TASK_TYPES: dict[str, tuple[type, ...]] = {
    "model_name": (str,), "model_file": (str,), "version": (str,), "params": (dict,),
}

#: how the type errors name the types expected and found
_WANT = {(str,): "a string", (int,): "an integer", _NUMBER: "a number", (dict,): "an object"}
_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
               int: "an integer", float: "a number", type(None): "null"}


def _type_name(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _check_types(record: Mapping, types: Mapping[str, tuple[type, ...]], file: str,
                 prefix: str = "") -> None:
    for key, allowed in types.items():
        value = record.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, allowed):
            want = _WANT.get(allowed, "another type")
            raise CorruptResult(f"{prefix}{key} is {_type_name(value)} ({value!r:.40}), "
                                f"expected {want}", file)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def file_batch_size(path: str | os.PathLike, kind: str) -> int:
    """The batch size in a branch file's name (``runtime_bs_8.csv`` -> 8), or
    :class:`CorruptResult` for a name that is no branch file of ``kind`` (csv or json)."""
    parsed = layout.parse_branch_file(os.fspath(path))
    if parsed is None or parsed[1] != kind:
        raise CorruptResult(f"not a MeasureRuntime {kind} file name (expected "
                            f"{layout.branch_files(1)[kind].replace('1', '<N>')})", path)
    return parsed[0]


def _read_json(path: str) -> Any:
    """The JSON value in ``path``, or :class:`CorruptResult` saying why there is none."""
    try:  # a FIFO or a device at a record is damage, never a hang or a read without end
        data = ingest.read_bytes(path, ingest.MAX_RECORD_BYTES, what="a record")
    except MLProfError as e:
        raise CorruptResult(e.message, path) from None
    if not data.strip():
        raise CorruptResult("is empty", path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or "\0" in text:
        raise CorruptResult("is not text (binary data)", path)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:  # JSONDecodeError, nesting too deep
        raise CorruptResult(f"is not valid JSON: {str(e)[:120]}", path) from None


def read_provenance(json_path: str | os.PathLike, batch_size: int | None = None) -> dict:
    """A branch's provenance, checked: a JSON object whose ``settings.batch_size`` is the batch
    size in its file name (and ``batch_size``, when given) and whose ``n_samples`` is a positive
    integer, with the fields the report copies of the right types
    (:data:`PROVENANCE_TYPES`), and every field of its header and loop of the right type and
    range (:class:`mlprof.results.records.BranchRecord`). Raises :class:`CorruptResult`."""
    path = os.fspath(json_path)
    name_bs = file_batch_size(path, "json")
    prov = _read_json(path)
    if not isinstance(prov, dict):
        raise CorruptResult(f"is {_type_name(prov)}, not a provenance record (a JSON object)",
                            path)
    if not prov:
        raise CorruptResult("is an empty JSON object, not a provenance record", path)
    records.format_version(prov, path)  # a newer format is refused, not guessed at
    settings = prov.get("settings")
    if not isinstance(settings, dict):
        raise CorruptResult("has no settings (object)" if settings is None else
                            f"settings is {_type_name(settings)}, expected an object", path)
    bs = settings.get("batch_size")
    if not _is_int(bs):
        raise CorruptResult(f"settings.batch_size is {_type_name(bs)} ({bs!r:.40}), expected an "
                            "integer", path)
    if bs != name_bs:
        raise CorruptResult(f"settings.batch_size is {bs}, but the file is for batch size "
                            f"{name_bs}", path)
    if batch_size is not None and bs != int(batch_size):
        raise CorruptResult(f"settings.batch_size is {bs}, expected {batch_size}", path)
    n = prov.get("n_samples")
    if not _is_int(n) or n < 1:
        raise CorruptResult(f"n_samples is {n!r:.40}, expected a positive integer", path)
    epc = prov.get("events_per_call")
    if epc is not None and (not _is_int(epc) or epc < 1):
        raise CorruptResult(f"events_per_call is {epc!r:.40}, expected a positive integer",
                            path)
    _check_types(prov, PROVENANCE_TYPES, path)
    _check_types(settings, SETTINGS_TYPES, path, "settings.")
    if isinstance(prov.get("task"), dict):
        _check_types(prov["task"], TASK_TYPES, path, "task.")
    if isinstance(prov.get("model"), dict):
        _check_types(prov["model"], {"spec_file": (str,)}, path, "model.")
    env = prov.get("environment")
    if isinstance(env, dict):
        _check_types(env, ENVIRONMENT_TYPES, path, "environment.")
        flag = env.get("contended")
        if flag is not None and not isinstance(flag, bool):
            raise CorruptResult(f"environment.contended is {_type_name(flag)} ({flag!r:.40}), "
                                "expected a boolean", path)
    records.BranchRecord.from_json(prov, path)  # every other field: type and range
    return prov


_ROW = re.compile(r" at row (\d+)")
_COLUMNS = re.compile(r"the number of columns changed from (\d+) to (\d+) at row (\d+)")


def read_samples(csv_path: str | os.PathLike, batch_size: int, n_samples: int) -> np.ndarray:
    """The ``runtime_ms`` column of a branch's raw CSV, checked: the header is exactly
    ``batch_size,event,call,runtime_ms``, every row has four numbers, there are ``n_samples``
    rows, the batch-size column is ``batch_size`` (and so is the file name's) and every sample is
    finite, positive and at most an hour (:data:`~mlprof.measure.stats.MAX_SAMPLE_MS`).
    Raises :class:`CorruptResult`.

    One pass of numpy's C parser: about 0.12 s for a million rows.
    """
    import numpy as np

    path = os.fspath(csv_path)
    name_bs = file_batch_size(path, "csv")
    if name_bs != int(batch_size):
        raise CorruptResult(f"the file is for batch size {name_bs}, its provenance says "
                            f"{batch_size}", path)
    try:
        raw = ingest.open_regular(path, MAX_SAMPLES_BYTES, what="a file of samples")
    except MLProfError as e:  # a FIFO or a device: damage, never a hang
        raise CorruptResult(e.message, path) from None
    try:
        with io.TextIOWrapper(raw, encoding="utf-8", newline=None) as f:
            header = f.readline()
            if not header:
                raise CorruptResult("is empty", path)
            if header.rstrip("\n") != RAW_HEADER:
                raise CorruptResult(f"header is {header.rstrip()[:60]!r}, expected "
                                    f"{RAW_HEADER!r}", path)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "input contained no data": checked below
                table = np.loadtxt(f, delimiter=",", dtype=np.float64, ndmin=2, comments=None)
    except CorruptResult:
        raise
    except OSError as e:
        raise CorruptResult(f"cannot be read: {e.strerror or e}", path) from None
    except UnicodeDecodeError:
        raise CorruptResult("is not text (binary data)", path) from None
    except ValueError as e:
        text = str(e).split("; use `usecols`")[0]
        m = _COLUMNS.search(text)
        if m:  # a row cut short (a truncated file) or one with extra fields
            got = int(m.group(2))
            # numpy counts rows from 1 here (and from 0 in conversion errors)
            raise CorruptResult(f"line {int(m.group(3)) + 1} has {got} fields, expected "
                                f"{len(RAW_COLUMNS)}" + (" (cut off?)" if got < len(RAW_COLUMNS)
                                                         else ""), path) from None
        text = _ROW.sub(lambda m: f" in line {int(m.group(1)) + 2}", text)
        raise CorruptResult(f"is not a table of numbers: {text[:120]}", path) from None
    if table.shape[0] == 0:
        raise CorruptResult(f"has a header but no samples (its provenance records {n_samples})",
                            path)
    if table.shape[1] != len(RAW_COLUMNS):  # every row as long, but not as the header
        raise CorruptResult(f"rows have {table.shape[1]} fields, expected {len(RAW_COLUMNS)} "
                            f"({RAW_HEADER})", path)
    if table.shape[0] != n_samples:
        raise CorruptResult(f"has {table.shape[0]} samples, its provenance records {n_samples}"
                            + (" (truncated?)" if table.shape[0] < n_samples else ""), path)
    bad_bs = table[:, 0] != batch_size
    if bad_bs.any():
        i = int(np.argmax(bad_bs))
        raise CorruptResult(f"batch_size column is {table[i, 0]:g} in line {i + 2}, expected "
                            f"{batch_size}", path)
    samples = table[:, 3]
    problem = _samples_problem(samples, path)
    if problem is not None:
        raise problem
    return np.ascontiguousarray(samples)


def _samples_problem(samples: np.ndarray, path: str) -> CorruptResult | None:
    """What makes ``samples`` (ms, line ``i + 2`` of ``path``) implausible, or None."""
    import numpy as np

    bad = ~np.isfinite(samples) | (samples <= 0)
    if bad.any():
        i = int(np.argmax(bad))
        return CorruptResult(f"{int(bad.sum())} of {samples.size} samples are not finite and "
                             f"positive (line {i + 2}: {samples[i]:g} ms)", path)
    bad = samples > MAX_SAMPLE_MS
    if bad.any():  # a damaged file, not a call: no call runs an hour under a measurement
        i = int(np.argmax(bad))
        return CorruptResult(f"{int(bad.sum())} of {samples.size} samples are longer than an "
                             f"hour per call (line {i + 2}: {samples[i]:g} ms), not plausible",
                             path)
    return None


def events_per_call(provenance: Mapping[str, Any]) -> int:
    """The events one call of a branch processed: its ``events_per_call`` (the batch size, or 1
    for a model without a batch dimension, which measures its own shapes at every batch size);
    for a record written before the field existed, its batch size (as throughputs were
    computed then, so an old store reads unchanged).

    Every derived rate (throughput, per-event latency) divides by this, never by the batch
    size: a no-batch model's calls are identical at batch sizes 1 and 8.
    """
    epc = provenance.get("events_per_call")
    if _is_int(epc) and epc >= 1:
        return int(epc)
    return int(provenance["settings"]["batch_size"])


def read_branch(csv_path: str | os.PathLike, json_path: str | os.PathLike
                ) -> tuple[np.ndarray, dict]:
    """One MeasureRuntime branch: ``(samples in ms, provenance)``, both checked
    (:func:`read_provenance`, :func:`read_samples`). Raises :class:`CorruptResult` naming the
    damaged file and what is wrong with it."""
    prov = read_provenance(json_path)
    return read_samples(csv_path, prov["settings"]["batch_size"], prov["n_samples"]), prov


#: the statuses a failure record may give (see :class:`~mlprof.errors.MeasurementFailed`)
FAILURE_STATUSES = ("failed", "timeout", "oom", "needs-network", "needs-package")


def read_failure(path: str | os.PathLike) -> dict:
    """A failure record (``_failure_bs_<N>.json``, ``_failure.json``), checked: a JSON object
    with a ``status`` of :data:`FAILURE_STATUSES` (default ``failed``) and, when present, a
    string ``message`` and ``time``. Raises :class:`CorruptResult`."""
    path = os.fspath(path)
    rec = _read_json(path)
    if not isinstance(rec, dict):
        raise CorruptResult(f"is {_type_name(rec)}, not a failure record (a JSON object)", path)
    if not rec:
        raise CorruptResult("is an empty JSON object, not a failure record", path)
    status = rec.get("status", "failed")
    if status not in FAILURE_STATUSES:
        raise CorruptResult(f"status is {status!r:.40}, expected one of "
                            f"{', '.join(FAILURE_STATUSES)}", path)
    _check_types(rec, {"message": (str,), "time": (str,)}, path)
    return rec


#: ``(csv, json) -> (their (device, inode, size, mtime), the problem or None)``
_CHECKED: dict[tuple[str, str], tuple[tuple, CorruptResult | None]] = {}
#: ``(csv, json) -> (their identities, samples, provenance)`` of valid branches read by
#: :func:`branch_problem`, newest last, at most :data:`KEEP_SAMPLES` samples in all
_CONTENT: OrderedDict[tuple[str, str], tuple[tuple, np.ndarray, dict]] = OrderedDict()
#: the most samples :data:`_CONTENT` keeps (8 bytes each: 32 MB), about a 1000-point sweep of
#: 4000 samples a point; older branches are read again when asked
KEEP_SAMPLES = 4_000_000
#: the samples :data:`_CONTENT` holds now (kept up to date by :func:`_keep`)
_CONTENT_SAMPLES = 0


def _identity(path: str) -> tuple:
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def branch_problem(csv_path: str | os.PathLike, json_path: str | os.PathLike
                   ) -> CorruptResult | None:
    """What is wrong with an existing branch (None: it is valid; :func:`read_branch`'s test).

    Remembered per file identity (device, inode, size, modification time) in this process, so
    that a workflow and its branches checking the same files read them once.
    """
    key = (os.fspath(csv_path), os.fspath(json_path))
    try:
        ident = (_identity(key[0]), _identity(key[1]))
    except OSError as e:
        return CorruptResult(f"cannot be read: {e.strerror or e}", e.filename or key[0])
    hit = _CHECKED.get(key)
    if hit is not None and hit[0] == ident:
        return hit[1]
    try:
        samples, prov = read_branch(*key)
        problem = None
        _keep(key, ident, samples, prov)
    except CorruptResult as e:
        problem = e
    _CHECKED[key] = (ident, problem)
    return problem


def _keep(key: tuple[str, str], ident: tuple, samples: np.ndarray, prov: dict) -> None:
    """Remember a valid branch's content for :func:`read_checked_branch` (within
    :data:`KEEP_SAMPLES`).

    The number of samples held is kept as a running total: summing them over every branch
    held on each call made checking N branches O(N^2) (501,500 sizes summed for the 1,000
    branches of ``benchmarks/scheduling.py``'s complete case, ~0.25 ms per branch profiled).
    """
    global _CONTENT_SAMPLES
    samples.flags.writeable = False  # shared by every caller that gets it
    old = _CONTENT.pop(key, None)
    if old is not None:
        _CONTENT_SAMPLES -= old[1].size
    _CONTENT[key] = (ident, samples, copy.deepcopy(prov))
    _CONTENT_SAMPLES += samples.size
    while _CONTENT_SAMPLES > KEEP_SAMPLES and len(_CONTENT) > 1:
        _CONTENT_SAMPLES -= _CONTENT.popitem(last=False)[1][1].size


def read_checked_branch(csv_path: str | os.PathLike, json_path: str | os.PathLike
                        ) -> tuple[np.ndarray, dict]:
    """:func:`read_branch`, without reading again what :func:`branch_problem` read and found
    valid in this process, as long as both files are the same (device, inode, size,
    modification time). The samples are read-only; the provenance is the caller's copy.

    Why: luigi checks that a sweep's branches are complete (every branch read and checked)
    right before MergeRuntimes runs, which read them all again: 0.21 s of the 0.62 s merge of
    the default 11-point sweep (2 vCPUs, load ~2), parsing CSVs checked a moment before."""
    key = (os.fspath(csv_path), os.fspath(json_path))
    hit = _CONTENT.get(key)
    if hit is not None:
        try:
            same = hit[0] == (_identity(key[0]), _identity(key[1]))
        except OSError:
            same = False
        if same:
            return hit[1], copy.deepcopy(hit[2])
    return read_branch(*key)


def write_branch(result: Any, paths: Mapping[str, str], *, task: Mapping[str, Any],
                 batch_job: Mapping[str, Any] | None = None,
                 script: Mapping[str, Any] | None = None,
                 export_record_file: str | None = None,
                 quantize_record_file: str | None = None,
                 model_identity: records.ModelIdentity | None = None) -> dict:
    """Write one batch size's raw samples (``paths["csv"]``) and provenance (``paths["json"]``).

    The provenance is the harness' record plus where it ran (``batch_job``), which task and
    parameters asked for it (``task``: enough to measure it again), the script's arguments
    (``script``), the export record of an exported script model, the recipe of a converted
    model (``precision.conversion``) and the model the user named
    (``model_identity``, see :mod:`mlprof.results.records`), stamped with the record format.
    The JSON is written last: a branch counts as complete only when both files exist. Returns
    the provenance.
    """
    prov = result.provenance
    if model_identity is not None:
        prov["model_identity"] = model_identity.to_dict()
    prov["batch_job"] = dict(batch_job) if batch_job else None
    prov["task"] = dict(task)
    if script is not None:
        prov["script"] = dict(script)
    if export_record_file is not None:
        prov["export"] = ingest.load_json(export_record_file)
    if quantize_record_file is not None:  # how the measured model was converted
        prov.setdefault("precision", {})["conversion"] = ingest.load_json(quantize_record_file)
    write_text_atomic(paths["csv"], result.csv_text())
    prov = records.stamp(prov, "branch")
    write_json_atomic(paths["json"], prov)
    _remember_written(paths["csv"], paths["json"], result.samples_ms, int(result.batch_size))
    return prov


def _remember_written(csv_path: str, json_path: str, samples: np.ndarray,
                      batch_size: int) -> None:
    """Let :func:`branch_problem` and :func:`read_checked_branch` know the branch this process
    has just written without parsing its CSV again: the samples are the values the CSV's rows
    parse to (``ns / 1e6`` and its 6-decimal text are the same double, bit for bit), held to
    the reader's checks; the provenance is read and checked as every reader does (a small
    file). Anything the reader would refuse is not remembered, so it is read and named.

    Why: luigi's completeness check after each branch parsed the CSV just written, 10-11 ms
    of a 27,000-sample point (about 0.1 s of the default 11-point sweep here)."""
    key = (os.fspath(csv_path), os.fspath(json_path))
    try:
        ident = (_identity(key[0]), _identity(key[1]))
        prov = read_provenance(key[1])
        name_bs = file_batch_size(key[0], "csv")
    except (OSError, CorruptResult):
        return
    # what read_samples checks besides the text: the batch size (column, file name, record),
    # the number of samples and their values
    bs = prov["settings"]["batch_size"]
    if batch_size != bs or name_bs != bs or samples.size != prov["n_samples"] \
            or _samples_problem(samples, key[0]) is not None:
        return
    _keep(key, ident, samples, prov)
    _CHECKED[key] = (ident, None)


def merge_branches(branches: Sequence[Mapping[str, str]], outputs: Mapping[str, str],
                   meta: Mapping[str, Any],
                   cost: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
                   ) -> list[dict]:
    """Merge MeasureRuntime's branch files into ``outputs``: ``raw`` (all samples under one
    header), ``stats`` (one row per batch size) and ``provenance`` (``meta`` plus every
    branch's record under ``measurements``). Returns the statistics rows.

    ``cost(provenance)`` gives each branch's graph cost (``gflop_per_call``, None when not
    counted), which fills the ``gflop_per_call``/``gflops_per_s`` columns and is kept, per
    branch, under ``cost`` in the merged provenance.

    Every branch is checked first (:func:`read_branch`): a damaged one raises
    :class:`CorruptResult` naming the file, and nothing is written."""
    provs, rows, costs = [], [], []
    for b in branches:
        # CorruptResult names a damaged file; a branch checked a moment ago is not read again
        samples, prov = read_checked_branch(b["csv"], b["json"])
        provs.append(prov)
        # cost(provenance): the measured graph's FLOPs (mlprof.model.flops.measured_cost)
        costs.append(dict(cost(prov)) if cost is not None else None)
        rows.append(summarize(samples, prov["settings"]["batch_size"], is_contended(prov),
                              gflop_per_call=(costs[-1] or {}).get("gflop_per_call"),
                              events_per_call=events_per_call(prov),
                              error=precision_error(prov)))
        rows[-1]["causes"] = causes_of(prov)  # for the warning (not a column of the CSV)
    with atomic_path(outputs["raw"]) as tmp, open(tmp, "w") as out:
        out.write(RAW_HEADER + "\n")
        for b in branches:
            with open(b["csv"]) as f:
                f.readline()  # the header, checked by read_branch
                body = f.read()
                out.write(body if not body or body.endswith("\n") else body + "\n")
    with atomic_path(outputs["stats"]) as tmp:
        write_stats_csv(tmp, rows)
    extra = {"cost": costs} if cost is not None else {}
    write_json_atomic(outputs["provenance"], records.stamp(
        {**meta, **extra, "measurements": provs}, "merged"))
    return rows


def precision_error(prov: Mapping[str, Any]) -> dict:
    """A branch's error against fp32 (``precision.error`` of its provenance: max abs and rel
    error, top-1/top-5 agreement); empty at fp32 and in records without it."""
    precision = prov.get("precision")
    error = precision.get("error") if isinstance(precision, dict) else None
    return dict(error) if isinstance(error, dict) else {}


def unstable_warning(name: str, rows: Sequence[Mapping[str, Any]],
                     runtime: str | None = None) -> str | None:
    """A warning naming the model (``name``), the ``runtime`` and the batch sizes whose CV
    exceeds :data:`CV_UNSTABLE` (None if none): among luigi's lines on stderr, a warning that
    does not say which curve it is about cannot be acted on."""
    unstable = [r for r in rows if r["unstable"]]
    if not unstable:
        return None
    sizes = ", ".join(str(r["batch_size"]) for r in unstable)
    cvs = ", ".join(f"{100 * r['cv']:.0f}%" for r in unstable)
    where = f"{name} on {runtime}" if runtime else name
    return (f"{where}: unstable measurement (CV > {100 * CV_UNSTABLE:.0f}%) at batch size(s) "
            f"{sizes} (CV {cvs}); the median and "
            "percentiles are robust, mean and std are not: consider a larger --min-duration or "
            "a quieter machine")


def read_merged_provenance(provenance_file: str | os.PathLike) -> dict:
    """A merged sweep's provenance (MergeRuntimes), read through :mod:`mlprof.ingest`: a FIFO,
    a device or anything but a JSON object whose ``measurements`` is a list of objects is a
    one-line :class:`CorruptResult`, never a hang."""
    path = os.fspath(provenance_file)
    prov = _read_json(path)
    if not isinstance(prov, dict):
        raise CorruptResult(f"is {_type_name(prov)}, not a provenance record (a JSON object)",
                            path)
    measurements = prov.get("measurements", [])
    if not isinstance(measurements, list) or not all(isinstance(m, dict) for m in measurements):
        raise CorruptResult("measurements is not a list of objects", path)
    return prov


def measured_versions(provenance_file: str | os.PathLike) -> list[str]:
    """The runtime versions a merged sweep was measured with (as recorded, in order, unique)."""
    prov = read_merged_provenance(provenance_file)
    versions = [str(m.get("runtime_version") or "") for m in prov.get("measurements", [])]
    return [v for v in dict.fromkeys(versions) if v]
