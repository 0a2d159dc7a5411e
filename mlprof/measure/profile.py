"""Where the time goes: one model, one runtime, one batch size, profiled per operator with the
runtime's own profiler (no law imports).

Profiling is a run of its own, never part of the timing runs (:mod:`mlprof.measure.harness`):
a profiler slows every call down. Measured here (2 shared cores, 1 thread, ONNX Runtime 1.32,
``examples/cnn`` with its 10 nodes): 15 µs per call without the profiler, 65 µs with it at
batch size 1, 480 vs 544 µs at batch size 64. Of those 65 µs, 29 µs are inside the nodes:
ONNX Runtime's profiler spends ~4 µs per node (timer, memory statistics) around and between
them. Where the runtime's profiler records the call itself (ONNX Runtime's ``model_run``
span), the call's time outside its operators is a row of its own,
:data:`~mlprof.runtimes.base.RUNTIME_OVERHEAD`, and :func:`profile` records how much of the
profiled calls' wall time the rows account for (``coverage``) and the operators alone
(``operator_coverage``). Measured with the task's defaults (``law run PlotProfile`` on
``examples/cnn``, batch sizes 1, 8, 64, 512): coverage 0.94, 0.95, 0.99, 0.99 (the Python
binding around ``model_run``, ~4 µs, is what remains), operator coverage 0.45, 0.67, 0.92,
0.98. ``torch.profiler`` has no such span: its coverage is the operators' (ResNet-18 0.96-0.97),
the rest being Python between them.

What is profiled, as in the harness: inputs built before the session, the first call and
``warmup`` calls unprofiled, then ``n_calls`` calls per event, in rounds until
``min_duration`` seconds, each timed with ``perf_counter_ns`` around the runtime's call (the
wall time). The runtime's :class:`~mlprof.runtimes.base.OpProfiler` gives ``(operator type,
ms)`` of every outermost operator run by those calls; :func:`aggregate` sums them per type.

:func:`profile_isolated` runs it in a child process under the machine-wide measurement lock,
like :func:`~mlprof.measure.harness.measure_isolated`.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mlprof.errors import MLProfError
from mlprof.measure.contention import environment, snapshot
from mlprof.measure.harness import ProgressFn, _needs_torch, events_in_call
from mlprof.measure.inputs import make_feeds
from mlprof.measure.isolate import run_isolated
from mlprof.measure.lock import measurement_lock
from mlprof.measure.provenance import measurement_header
from mlprof.measure.settings import MeasureSettings
from mlprof.progress import Progress
from mlprof.results import records
from mlprof.runtimes import get_runtime, runtime_info, runtime_names
from mlprof.runtimes.base import RUNTIME_OVERHEAD, OpEvent
from mlprof.util import write_json_atomic, write_text_atomic

#: the columns of a profile's CSV: operator type, runs per profiled call, milliseconds per
#: profiled call (the mean: the columns add up to the profiled time), share of the profiled
#: time (the operators' and the runtime's overhead), and the median over the profiled calls of
#: the type's milliseconds in each call (empty where the profiler does not tell the calls
#: apart: torch.profiler). The median is what profiles are compared by: one stalled call
#: (1,770 ms of a kernel whose median is 0.033 ms) moves the mean by its share, not the median
CSV_COLUMNS = ("op_type", "calls", "ms_per_call", "share", "median_ms_per_call")
#: the columns of profiles written before the median (still read; their median is None)
CSV_COLUMNS_V1 = CSV_COLUMNS[:4]
#: what a profile's provenance must hold (checked by :func:`read_profile`)
PROVENANCE_FIELDS = ("runtime", "runtime_version", "profiler", "batch_size", "n_profiled_calls",
                     "wall_ms", "wall_ms_per_call", "op_ms_per_call", "coverage")


@dataclass
class OpRow:
    """One operator type of a profile, per profiled call."""

    op_type: str
    calls: float
    ms_per_call: float
    share: float
    #: the median over the profiled calls of the type's milliseconds in each call (0 in a
    #: call that did not run it); None where the profiler does not tell the calls apart
    median_ms_per_call: float | None = None

    @property
    def typical_ms(self) -> float:
        """Milliseconds per call to compare: the median where known, else the mean."""
        return self.ms_per_call if self.median_ms_per_call is None else self.median_ms_per_call


@dataclass
class ProfileResult:
    """The operator times of one batch size, the profiled calls' wall times, provenance."""

    batch_size: int
    ops: list[OpRow]
    wall_ms: list[float]
    provenance: dict[str, Any] = field(default_factory=dict)

    def csv_text(self) -> str:
        """``op_type,calls,ms_per_call,share,median_ms_per_call``, the most expensive first."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(CSV_COLUMNS)
        for r in self.ops:
            w.writerow([r.op_type, f"{r.calls:g}", f"{r.ms_per_call:.6f}", f"{r.share:.6f}",
                        "" if r.median_ms_per_call is None else f"{r.median_ms_per_call:.6f}"])
        return out.getvalue()


def check_profilable(runtime: str) -> None:
    """A one-line error (``--runtime``) for a runtime without a per-operator profiler."""

    info = runtime_info(runtime)
    if not info.profiler:
        can = ", ".join(f"{n} ({runtime_info(n).profiler})" for n in runtime_names()
                        if runtime_info(n).profiler)
        raise MLProfError(f"runtime {info.name} cannot be profiled per operator; profiled are "
                          f"{can}", field="--runtime")


def aggregate(events: Sequence[OpEvent], n_calls: int) -> list[OpRow]:
    """Sum ``(operator type, ms)`` events per type, per profiled call; the most expensive
    first (ties by name). Where every event names its call (``(type, ms, call)``), each type's
    median over the calls of its milliseconds in each call, too (0 in a call without it)."""
    import numpy as np

    if n_calls < 1:
        raise ValueError(f"n_calls must be >= 1, got {n_calls}")
    totals: dict[str, list[float]] = {}
    per_call: dict[str, np.ndarray] | None = {}
    for event in events:
        name, ms = event[0], event[1]
        t = totals.setdefault(name, [0, 0.0])
        t[0] += 1
        t[1] += ms
        call = event[2] if len(event) > 2 else None
        if per_call is not None:
            if call is None or not 0 <= call < n_calls:
                per_call = None  # not every event names its call: means only
            else:
                per_call.setdefault(name, np.zeros(n_calls))[call] += ms
    whole = sum(t[1] for t in totals.values())
    rows = [OpRow(name, count / n_calls, ms / n_calls, ms / whole if whole > 0 else 0.0,
                  None if per_call is None else float(np.median(per_call[name])))
            for name, (count, ms) in totals.items()]
    return sorted(rows, key=lambda r: (-r.ms_per_call, r.op_type))


#: the share of a time budget the warm-up may take (the rest is for the profiled calls)
WARMUP_SHARE = 0.25
#: a budget never cuts the profiled calls below this many (and one per event): a 16-84 % range
MIN_PROFILED_CALLS = 3


def profile(model_file: str, settings: MeasureSettings, script_args: tuple[str, ...] = (),
            progress: ProgressFn | None = None, budget_s: float = 0.0) -> ProfileResult:
    """Profile ``model_file`` with ``settings`` in this process (see the module docstring).

    ``budget_s`` > 0 bounds the time of a large model's profile (ResNet-18 at batch size 512
    takes ~55 s per call on one thread: 111 calls with the default settings): the warm-up
    stops once it took :data:`WARMUP_SHARE` of the budget, the profiled calls once the whole
    budget is spent and at least :data:`MIN_PROFILED_CALLS` (and one per event) were made,
    whichever comes first of that and the settings' own end. What the budget cut is recorded
    (``warmup_calls``, ``n_profiled_calls``, ``budget_s``, ``cut_by_budget``), never silent.
    """

    started = _dt.datetime.now(_dt.timezone.utc)
    s = settings.validated()
    check_profilable(s.runtime)
    runtime_cls = get_runtime(s.runtime)
    pc = time.perf_counter_ns
    with Progress(progress) as rep:
        rep.phase("loading the model")
        resolved = runtime_cls.resolve(model_file, tuple(script_args))
        rt = runtime_cls(resolved, device=s.device, threads=s.threads)
        rt.configure(s)
        profiler = rt.op_profiler()
        feeds = make_feeds(resolved.inputs, s.batch_size, s.n_events, s.input_data, s.seed)
        rep.phase("creating the session")
        rt.load(s.batch_size)
        calls = [rt.bind(feed) for feed in feeds]
        rep.phase("first call and warm-up (not profiled)")
        fn, args = calls[0]
        try:
            fn(*args)
        except Exception as e:  # the runtime's own error, made one clear line
            explain = getattr(rt, "explain_failure", None)
            raise MLProfError(explain(e, s.batch_size) if explain else f"first inference "
                              f"failed: {e}", resolved.spec.spec_file) from None
        budget_ns = int(budget_s * 1e9) if budget_s > 0 else 0
        warm_start = pc()
        warmed = 0
        while warmed < s.warmup:
            fn, args = calls[warmed % len(calls)]
            fn(*args)
            warmed += 1
            if budget_ns and pc() - warm_start >= WARMUP_SHARE * budget_ns:
                break
        rep.phase("profiling")
        walls: list[int] = []
        min_ns = int(s.min_duration * 1e9)
        fewest = max(MIN_PROFILED_CALLS, len(calls))
        cut = warmed < s.warmup
        # CPU counters around the profiled calls, never inside them, as the harness does
        # around its timed loop (mlprof.measure.contention): a disturbed profile is flagged
        cpu_before = snapshot()
        profiler.start()
        begin = pc()
        done = False
        while not done:
            for fn, args in calls:
                for _ in range(s.n_calls):
                    t0 = pc()
                    fn(*args)
                    walls.append(pc() - t0)
                    if budget_ns and len(walls) >= fewest and pc() - warm_start >= budget_ns:
                        done = True
                        break
                if done:
                    break
            if pc() - begin >= min_ns:
                break
        # the budget stopped it, unless that was where the settings end anyway
        cut = cut or (done and not (len(walls) % (s.n_calls * len(calls)) == 0
                                    and pc() - begin >= min_ns))
        cpu_after = snapshot()
        events = profiler.stop(len(walls))
        rep.phase(f"{len(walls)} calls profiled", 1.0)

    n = len(walls)
    ops = aggregate(events, n)
    wall_ms = [w / 1e6 for w in walls]
    wall_per_call = sum(wall_ms) / n
    profiled_per_call = sum(r.ms_per_call for r in ops)
    op_per_call = sum(r.ms_per_call for r in ops if r.op_type != RUNTIME_OVERHEAD)
    spec = resolved.spec
    header = measurement_header(
        started=started, runtime=s.runtime, runtime_version=runtime_cls.version(),
        device=s.device, threads=s.threads, runtime_settings=rt.info(),
        precision={"precision": s.precision},
        model={"name": spec.name, "label": spec.label, "spec_file": spec.spec_file,
               "file": spec.file, "content_hash": spec.content_hash},
        settings=s, batch_size=s.batch_size,
        events_per_call=events_in_call(s.batch_size, resolved.inputs),
        # what else used the CPUs during the profiled calls: mlprof.measure.contention
        environment=environment(cpu_before, cpu_after))
    prov = {
        **header.to_json(),
        "profiler": runtime_info(s.runtime).profiler,
        "n_profiled_calls": n,
        "warmup_calls": warmed,
        # the time budget (0: none) and whether it cut the warm-up or the profiled calls short
        # of the settings' (--warmup, --n-calls per event)
        "budget_s": float(budget_s),
        "cut_by_budget": bool(cut),
        "wall_ms": wall_ms,
        "wall_ms_per_call": wall_per_call,
        "op_ms_per_call": op_per_call,
        "overhead_ms_per_call": profiled_per_call - op_per_call,
        # how much of the profiled calls' wall time the profile accounts for (operators and
        # the runtime's overhead), and the operators alone
        "coverage": profiled_per_call / wall_per_call if wall_per_call > 0 else 0.0,
        "operator_coverage": op_per_call / wall_per_call if wall_per_call > 0 else 0.0,
        "n_op_types": len(ops),
    }
    return ProfileResult(s.batch_size, ops, wall_ms, prov)


def profile_isolated(model_file: str, settings: MeasureSettings, *,
                     script_args: tuple[str, ...] = (), timeout: float | None = None,
                     progress: ProgressFn | None = None, budget_s: float = 0.0
                     ) -> ProfileResult:
    """:func:`profile` in a child process (:func:`mlprof.measure.isolate.run_isolated`: timeout,
    memory limit, crashes caught), holding the machine-wide measurement lock
    (:func:`mlprof.measure.lock.measurement_lock`); the wait is ``lock_wait_s``."""

    check_profilable(settings.runtime)
    label = f"profile of {os.path.basename(model_file)} at batch size {settings.batch_size}"
    with measurement_lock(label) as lock:
        result = run_isolated(profile, {"model_file": model_file, "settings": settings,
                                        "script_args": tuple(script_args),
                                        "budget_s": float(budget_s)},
                              timeout=timeout, progress=progress, label=label,
                              torch=_needs_torch(model_file, settings.runtime))
    result.provenance["lock_wait_s"] = lock.wait_s
    return result


def write_profile(result: ProfileResult, paths: dict[str, str], **extra: Any) -> None:
    """The CSV and the provenance (plus ``extra`` entries) at ``paths["csv"]`` and
    ``paths["json"]``, each written atomically, the CSV first."""

    write_text_atomic(paths["csv"], result.csv_text())
    write_json_atomic(paths["json"], records.stamp({**result.provenance, **extra}, "profile"))


def read_profile(csv_path: str, json_path: str) -> tuple[list[OpRow], dict[str, Any]]:
    """A profile's rows and provenance; a one-line :class:`MLProfError` naming the file and
    the field that is wrong."""
    try:
        with open(json_path) as f:
            prov = json.load(f)
    except (OSError, ValueError) as e:
        raise MLProfError(f"cannot read the profile's provenance: {e}", json_path) from None
    if not isinstance(prov, dict):
        raise MLProfError("not a JSON object", json_path)
    missing = [k for k in PROVENANCE_FIELDS if k not in prov]
    if missing:
        raise MLProfError("missing in the profile's provenance", json_path, missing[0])
    rows = []
    try:
        with open(csv_path, newline="") as f:
            reader = csv.DictReader(f)
            if tuple(reader.fieldnames or ()) not in (CSV_COLUMNS, CSV_COLUMNS_V1):
                raise MLProfError(f"columns {reader.fieldnames}, expected {list(CSV_COLUMNS)}",
                                  csv_path, "header")
            for i, r in enumerate(reader, start=2):
                for col in CSV_COLUMNS[1:]:
                    if col == "median_ms_per_call" and not r.get(col):
                        continue  # an older profile, or a profiler without the calls
                    try:
                        float(r[col])
                    except (TypeError, ValueError):
                        raise MLProfError(f"line {i}: not a number: {r[col]!r}", csv_path,
                                          col) from None
                median = r.get("median_ms_per_call")
                rows.append(OpRow(r["op_type"], float(r["calls"]), float(r["ms_per_call"]),
                                  float(r["share"]), float(median) if median else None))
    except OSError as e:
        raise MLProfError(f"cannot read the profile: {e}", csv_path) from None
    records.ProfileRecord.from_json(prov, json_path)  # every field: type and range
    return rows, prov
