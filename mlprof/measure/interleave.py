"""Interleaved comparisons: several configurations (model x runtime) measured in alternating
rounds in one process, and their speed-ups with bootstrap confidence intervals.

Why: this VM flips between a fast and a slow state every 0.1-1 s, so two curves measured minutes
apart differ by up to ~20 % from drift alone (``benchmarks/fidelity.py``: the ratio of two
independent medians swings by +-10 %, the median of paired per-round ratios stays within 2 %).
Here every configuration is loaded into ONE isolated child (sessions created, first call and
warm-up made before any timing); then each of R rounds runs every configuration for
``n_calls`` calls per event, one after the other within a fraction of a second, the order
rotating from round to round (AB, BA, ... for two), and keeps each configuration's median of the
round. Round i of A and round i of B saw the same machine state, so their ratio cancels the
drift; the spread of the R paired ratios is the noise left, and a bootstrap over rounds turns it
into a 95 % confidence interval.

The speed-up of configuration j is ``reference round median / j's round median`` (above 1: j is
faster than the reference, the first configuration), estimated as the median over the rounds;
its interval is the percentile interval of that median over 2000 resamples of the rounds
(seeded, so the same data give the same interval). An interval that contains 1 means the data
cannot tell the two apart: the table says "not significant".

A configuration may also differ from the others in one measurement setting
(``Config.settings``: ``threads=2``; ``PlotMultiRuntimes --compare``), and a model script is
measured as its runtime measures it: ONNX Runtime and OpenVINO on its ONNX export (an ``.onnx``
file here), the PyTorch runtimes on the script itself (``script.py::HASH`` with its arguments).

What cannot share a process is refused (:func:`check_interleavable`): other runtime versions
(measured in their own virtual environments) and AOT TensorFlow models.
"""

from __future__ import annotations

import csv
import io
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from mlprof import ingest
from mlprof.errors import MLProfError
from mlprof.measure.causes import gc_watch
from mlprof.measure.contention import environment, snapshot
from mlprof.measure.harness import _needs_torch
from mlprof.measure.inputs import make_feeds
from mlprof.measure.isolate import run_isolated
from mlprof.measure.lock import measurement_lock
from mlprof.measure.provenance import measurement_header
from mlprof.measure.settings import DEFAULT_ROUNDS, MeasureSettings  # noqa: F401 (its old home)
from mlprof.results.records import NoiseRecord
from mlprof.runtimes import TFAOT_MODEL, get_runtime
from mlprof.runtimes.base import compiled_fields

#: bootstrap resamples and confidence level of the speed-up intervals
N_RESAMPLES = 2000
LEVEL = 0.95
#: rounds when none are given: :data:`mlprof.measure.settings.DEFAULT_ROUNDS` (defined there,
#: in a light module: ``law run``'s parser reads it for ``--interleave``)
#: the fewest rounds an interval is given from (fewer are refused up front). Why 6: with fewer
#: rounds no 95 % interval of a median can be honest without assumptions on the noise (even the
#: widest, [smallest, largest] ratio, holds the median with probability 1 - 2/2**n: 93.8 % at 5
#: rounds, 96.9 % at 6). Measured (``benchmarks/interleave_rounds.py``, the 10x128 DNN against
#: itself, 2400 rounds cut into blocks, batch sizes 1 and 8, twice: on a quiet machine and
#: beside other tests): the bootstrap interval called the model faster or slower than itself in
#: 12-26 % of 2-round and 6-12 % of 3-round comparisons (issue 22: 5 of 20), 0.8-4.7 % at 4,
#: 0-1.9 % at 5 and 0-3.3 % from 6 on; on independent normal noise (simulated) 49 %, 25 %,
#: 12 %, 7 % at 2-5 rounds and 6 % from 6 on
MIN_ROUNDS = 6
#: the most rounds: every round creates fresh sessions of every configuration (tens of ms
#: each), and the interval narrows as 1/sqrt(rounds): 1000 rounds give an interval ~7 times
#: narrower than the default 20, beyond which the machine's drift, not the rounds, limits it
MAX_ROUNDS = 1000

#: the verdict of a row from fewer than MIN_ROUNDS rounds (tables of older mlprof versions)
TOO_FEW = "too few rounds to tell"

TABLE_COLUMNS = ("batch_size", "config", "model", "runtime", "reference", "rounds", "median_ms",
                 "speedup", "ci_low", "ci_high", "significant", "verdict", "precision",
                 "max_abs_error", "max_rel_error", "top1_agreement", "error_note",
                 "disturbed_rounds", "causes", "floor")
#: the columns a table of an older mlprof may lack (read as empty); ``error_note``: why the
#: errors are ``inf`` (:data:`mlprof.model.precision.NONFINITE`), empty when they are numbers;
#: ``disturbed_rounds``: the rounds in which a cause was named (:class:`_CauseWindows`),
#: ``causes`` which (comma-separated), both empty where the rounds were not judged;
#: ``floor``: the host's noise floor the verdict was judged by (empty: not calibrated)
_NEWER_COLUMNS = ("precision", "max_abs_error", "max_rel_error", "top1_agreement",
                  "error_note", "disturbed_rounds", "causes", "floor")
#: the columns of the rounds CSV (:func:`rounds_csv`); an older one lacks the last two
ROUNDS_COLUMNS = ("batch_size", "round", "position", "config", "median_ms", "contended",
                  "causes")
_ERROR_NUMBERS = ("max_abs_error", "max_rel_error", "top1_agreement")


@dataclass(frozen=True)
class Config:
    """One compared configuration: the file a runtime measures (YAML/ONNX, a script's ONNX
    export, or ``script.py::HASH`` run with ``script_args``) and, in ``settings``, the
    measurement settings in which it differs from the others (``(("threads", 2),)``)."""

    label: str
    model_file: str
    runtime: str
    model: str = ""
    script_args: tuple[str, ...] = ()
    settings: tuple[tuple[str, Any], ...] = ()

    def measure_settings(self, base: MeasureSettings) -> MeasureSettings:
        """``base`` with this configuration's settings and runtime, checked."""
        return replace(base, runtime=self.runtime, **dict(self.settings)).validated()


@dataclass
class InterleavedResult:
    """The per-round medians of one batch size: ``round_medians_ms[r, j]`` is configuration
    j's median in round r; ``orders[r]`` the order the configurations ran in round r."""

    batch_size: int
    configs: list[Config]
    round_medians_ms: np.ndarray
    orders: list[list[int]]
    provenance: dict[str, Any] = field(default_factory=dict)
    #: the causes named in each round (:class:`_CauseWindows`; empty: none, None: not judged)
    round_causes: list[list[str] | None] = field(default_factory=list)


def check_interleavable(model_kind: str, runtime: str, runtime_version: str = "",
                        file: str = "") -> None:
    """Refuse, in one line, a configuration that cannot share a process with the others."""

    if runtime_version:
        raise MLProfError(f"{runtime} {runtime_version} is measured in its own "
                          "virtual environment and cannot share a process with the other "
                          "configurations; leave out --runtime-versions", file or None,
                          "--runtime-versions")
    if model_kind == TFAOT_MODEL:
        raise MLProfError("AOT TensorFlow models (inference_engine: tfaot) are "
                          "compiled per batch size into their own library and cannot be "
                          "interleaved; compare them without --interleave", file or None,
                          "--interleave")


def check_rounds(rounds: int) -> int:
    """At least :data:`MIN_ROUNDS` rounds (fewer give no honest interval) and at most
    :data:`MAX_ROUNDS`."""
    if isinstance(rounds, bool) or not isinstance(rounds, int):
        raise MLProfError(f"rounds must be an integer, got {rounds!r}", field="--interleave")
    if rounds < MIN_ROUNDS:
        raise MLProfError(f"give at least {MIN_ROUNDS} rounds, got {rounds} (a 95 % interval "
                          f"from fewer rounds is too narrow: too few rounds to tell)",
                          field="--interleave")
    if rounds > MAX_ROUNDS:
        raise MLProfError(f"give at most {MAX_ROUNDS} rounds, got {rounds}",
                          field="--interleave")
    return rounds


def measure_interleaved(configs: Sequence[Config], settings: MeasureSettings, rounds: int,
                        progress: Callable[[float, str], None] | None = None
                        ) -> InterleavedResult:
    """Load every configuration in this process, then time ``rounds`` rounds, their order
    rotating (AB, BA, ...: the noise calibration interleaves its A/A pairs itself, slice by
    slice in random order, :func:`mlprof.measure.calibration._measure_pairs`).

    Per configuration: inputs (its settings' input data and seed: the same values for all
    unless the input data is the compared setting), session, one untimed first call and
    ``warmup`` untimed calls, all before round 1. A round runs each configuration's ``n_calls``
    calls per event, each call timed alone with ``perf_counter_ns`` as in
    :mod:`mlprof.measure.harness`.
    """

    rounds = check_rounds(rounds)
    s = settings.validated()
    say = progress or (lambda f, m: None)
    say(0.0, f"loading {len(configs)} configurations")
    models, own = [], []
    for c in configs:
        cls = get_runtime(c.runtime)
        sc = c.measure_settings(s)
        resolved = cls.resolve(c.model_file, tuple(c.script_args))
        feeds = make_feeds(resolved.inputs, sc.batch_size, sc.n_events, sc.input_data, sc.seed)
        models.append((cls, resolved, feeds))
        own.append(sc)
    n = len(configs)
    medians = np.zeros((rounds, n))
    orders = []
    bufs = [[0] * (sc.n_calls * sc.n_events) for sc in own]
    pc = time.perf_counter_ns
    start = time.time()
    infos: list[dict[str, Any]] = []
    # the cause record (mlprof.measure.causes): the whole run's, with the drift probe, in the
    # header; each round's from counters read between rounds (never inside one), shared by
    # the rounds of a window long enough that reading them costs <= ROUND_OVERHEAD of it
    gc_pauses = gc_watch()
    run_start = snapshot()
    windows = _CauseWindows(pc)
    for r in range(rounds):
        order = [(r + k) % len(configs) for k in range(len(configs))]
        orders.append(order)
        # fresh sessions every round, created while the last round's still exist: where a
        # session's weights land in memory changes its speed by up to 2 % for the whole life
        # of the session (4 sessions of the 10x128 DNN in one process: 0.984-1.019 of the
        # first, stable over 20 rounds), a difference between sessions, not configurations
        # (`current` still holds the last round's sessions while the new ones are made)
        # made in the round's order too: the session made first ran 0.5 % slower on average
        # (100 runs of the same DNN twice, 12 rounds each) when it always came first
        made = {j: _ready(*models[j], own[j]) for j in order}
        current = [made[j] for j in range(n)]
        if not infos:
            infos = [_config_info(c, rt, models[j][1])
                     for j, (c, (rt, _)) in enumerate(zip(configs, current, strict=True))]
        for j in order:
            k, buf = 0, bufs[j]
            for fn, args in current[j][1]:
                for _ in range(own[j].n_calls):
                    t0 = pc()
                    fn(*args)
                    buf[k] = pc() - t0
                    k += 1
            medians[r, j] = float(np.median(buf)) / 1e6
        windows.after_round(r, last=r == rounds - 1)
        say((r + 1) / rounds, f"round {r + 1} of {rounds}")
    run_env = environment(run_start, snapshot(), short=True)
    gc_pauses.stop()
    # a lower precision's error against the fp32 configuration of its model and runtime, on
    # the same inputs (after the rounds, untimed)
    for j in range(len(configs)):
        ref = _fp32_of(configs, j)
        if ref is not None:
            from mlprof.model.precision import as_arrays, output_error

            (fn, args), (rfn, rargs) = current[j][1][0], current[ref][1][0]
            infos[j]["error_vs_fp32"] = output_error(as_arrays(rfn(*rargs)),
                                                     as_arrays(fn(*args)))
    prov = {
        "interleaved": True,
        "method": f"{rounds} rounds; each round runs every configuration for its n_calls "
                  f"({', '.join(str(sc.n_calls) for sc in own)}) calls per event in "
                  "rotating order in one process; "
                  "speed-ups are paired per round",
        **measurement_header(settings=s, environment=run_env).to_json(), "rounds": rounds,
        "round_environment": windows.records, "round_environment_s": windows.spent_ns / 1e9,
        "configs": [{"label": c.label, "model": c.model, **info}
                    for c, info in zip(configs, infos, strict=True)],
        "started_unix": start, "finished_unix": time.time(),
    }
    return InterleavedResult(s.batch_size, list(configs), medians, orders, prov,
                             windows.round_causes)


#: the most of a window's wall time that reading the cause counters between rounds may cost:
#: one read is 0.15-0.3 ms here (``snapshot(probe=False)``: threads' schedstat, PSI, cgroup,
#: getrusage, /proc/stat), 1-2 % of a 20 ms round and 20 % of a 1 ms one, so a window holds as
#: many rounds as keep it within 1 %, and its causes are each of its rounds'
ROUND_OVERHEAD = 0.01


class _CauseWindows:
    """The cause record of the rounds of an interleaved run: a counter snapshot (no drift
    probe: 0.7 ms) at the start and after each window of rounds, the window closed once its
    time is at least the last snapshot's cost / :data:`ROUND_OVERHEAD`; ``records``: each
    window's ``environment`` with its ``rounds`` (first, last); ``round_causes[r]``: round
    r's causes (empty: none named; None: not judged, no ``/proc``); ``spent_ns``: the time
    the reads took (the provenance's ``round_environment_s``)."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self.clock = clock
        self.records: list[dict[str, Any]] = []
        self.round_causes: list[list[str] | None] = []
        self.first = 0
        t0 = clock()
        self.start = snapshot(probe=False)
        self.cost = self.spent_ns = clock() - t0
        self.opened = clock()

    def after_round(self, r: int, last: bool) -> None:
        """Close the window after round ``r`` when it is long enough (or ``last``)."""
        if not last and (self.clock() - self.opened) * ROUND_OVERHEAD < self.cost:
            return
        t0 = self.clock()
        end = snapshot(probe=False)
        env = environment(self.start, end, short=True)
        took = self.clock() - t0
        # the dearest read so far: a read costs 0.2 ms on a quiet VM and 10 ms while other
        # processes keep the CPUs busy (4-7 reads per 20 rounds, the last read's cost let the
        # reads take 1.7-2.7 % of the rounds there)
        self.cost = max(self.cost, took)
        self.spent_ns += took
        env.pop("cause_thresholds", None)  # the run's header keeps them, once
        env.pop("loadavg", None)
        self.records.append({"rounds": [self.first, r], **env})
        named = env.get("causes")
        self.round_causes += [None if named is None else list(named)] * (r + 1 - self.first)
        self.first, self.start, self.opened = r + 1, end, self.clock()


def _precision(c: Config) -> str:
    return str(dict(c.settings).get("precision", "fp32"))


def _fp32_of(configs: Sequence[Config], j: int) -> int | None:
    """The fp32 configuration that configuration ``j`` (at a lower precision) is compared with:
    the same model, runtime and other settings; None at fp32 or without one."""
    c = configs[j]
    if _precision(c) == "fp32":
        return None
    rest = {k: v for k, v in c.settings if k != "precision"}
    return next((k for k, o in enumerate(configs) if _precision(o) == "fp32"
                 and o.model == c.model and o.runtime == c.runtime
                 and dict(o.settings) == rest), None)


def _config_info(c: Config, rt: Any, resolved: Any) -> dict[str, Any]:
    """What the provenance says of one configuration, from its first round's session: the
    runtime and its settings, the model file and its hash, the compared settings and the
    session's compile (apart from the rounds; each round's sessions are new)."""
    return {"runtime": rt.name, "runtime_version": type(rt).version(),
            "runtime_settings": rt.info(), "model_file": c.model_file,
            "model_sha256": resolved.spec.model_sha256(),
            "settings": dict(c.settings), "script_args": list(c.script_args),
            **compiled_fields([rt.compile_record])}


def _ready(cls: Any, resolved: Any, feeds: list[dict[str, np.ndarray]],
           s: MeasureSettings) -> tuple[Any, list[tuple[Callable[..., Any], tuple]]]:
    """A new session of one configuration, compiled where its runtime compiles on the first
    call (:meth:`Runtime.compile <mlprof.runtimes.base.Runtime.compile>`; torch-compile's
    call is the AOTInductor package the compile loads, and without it the first call failed),
    its first call per event and ``s.warmup`` calls made (untimed): (runtime, bound calls)."""
    rt = cls(resolved, device=s.device, threads=s.threads)
    rt.configure(replace(s, runtime=cls.name))
    rt.load(s.batch_size)
    calls = [rt.bind(f) for f in feeds]
    rt.compile(*calls[0])  # a runtime that compiles on the first event's call (torch-compile)
    for fn, args in calls:
        fn(*args)
    for i in range(s.warmup):
        fn, args = calls[i % len(calls)]
        fn(*args)
    return rt, calls


def measure_interleaved_isolated(configs: Sequence[Config], settings: MeasureSettings,
                                 rounds: int, *, timeout: float | None = None,
                                 progress: Callable[[float, str], None] | None = None
                                 ) -> InterleavedResult:
    """:func:`measure_interleaved` in one isolated child, under the machine-wide measurement
    lock (the time waited is recorded as ``lock_wait_s``)."""

    label = (f"interleaved {' vs '.join(c.label for c in configs)} at batch size "
             f"{settings.batch_size}")
    with measurement_lock(label) as lock:
        result = run_isolated(measure_interleaved, {"configs": list(configs),
                                                    "settings": settings, "rounds": rounds},
                              timeout=timeout, progress=progress, label=label,
                              torch=any(_needs_torch(c.model_file, c.runtime) for c in configs))
    result.provenance["lock_wait_s"] = lock.wait_s
    return result


def bootstrap_ci(ratios: Sequence[float], n_resamples: int = N_RESAMPLES, level: float = LEVEL,
                 seed: int = 0) -> tuple[float, float, float]:
    """(median, low, high) of paired ratios: the percentile interval of the median over
    ``n_resamples`` resamples of the rounds (with replacement), seeded."""
    x = np.asarray(ratios, dtype=np.float64)
    # 2: the computation's own minimum; an honest 95 % interval needs MIN_ROUNDS, which
    # check_rounds requires before anything is measured (benchmarks judge fewer on purpose)
    if x.ndim != 1 or x.size < 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"need at least 2 finite ratios, got {x.tolist()!r}")
    rng = np.random.default_rng(seed)
    stats = np.median(x[rng.integers(0, x.size, (n_resamples, x.size))], axis=1)
    alpha = (1.0 - level) / 2
    low, high = np.quantile(stats, [alpha, 1.0 - alpha])
    return float(np.median(x)), float(low), float(high)


def comparison_rows(result: InterleavedResult, noise: NoiseRecord | None = None
                    ) -> list[dict[str, Any]]:
    """One row per configuration: speed-up over the first with its interval and verdict, and
    a lower precision's error against fp32 (``inf`` with its ``error_note`` where infinite).

    ``noise``: this host's noise record (:func:`mlprof.measure.noise.find_floor`). A speed-up
    whose interval excludes 1 but whose ``|speed-up - 1|`` is within the floor of the class of
    the reference's median call time and threads gets the verdict ``within this host's noise
    (floor X %)``: the rounds tell the two apart, but an A/A pair of this host moves as far
    (interleaved A/A rounds of one DNN on this VM: 95th percentile of |ratio - 1| 9.3 % at
    0.019 ms calls, 3.1 % at 0.037 ms; ``benchmarks/alerts_floor.py``). The floor used is the
    row's ``floor`` (None without a record: the verdicts are the interval's alone)."""
    from mlprof.measure.noise import is_within_floor, within_noise
    from mlprof.model.precision import error_note, error_number

    m = result.round_medians_ms
    ref = result.configs[0]
    rows = []
    configs = result.provenance.get("configs") or [{} for _ in result.configs]
    floor = None
    if noise is not None:
        prov_settings = result.provenance.get("settings") or {}
        threads = dict(ref.settings).get("threads", prov_settings.get("threads")
                                         if isinstance(prov_settings, dict) else None)
        floor = noise.floor_for(float(np.median(m[:, 0])),
                                threads if isinstance(threads, int) else None)
    for j, c in enumerate(result.configs):
        error = configs[j].get("error_vs_fp32") or {}
        if j == 0:
            est, low, high = 1.0, 1.0, 1.0
        else:
            est, low, high = bootstrap_ci(m[:, 0] / m[:, j])
        significant = j > 0 and not (low <= 1.0 <= high)
        verdict = ("reference" if j == 0 else "not significant" if not significant
                   else within_noise(floor) if floor is not None and is_within_floor(est, floor)
                   else "faster" if est > 1 else "slower")
        rows.append({"batch_size": result.batch_size, "config": c.label, "model": c.model,
                     "runtime": c.runtime, "reference": ref.label, "rounds": m.shape[0],
                     "median_ms": float(np.median(m[:, j])), "speedup": est, "ci_low": low,
                     "ci_high": high, "significant": significant, "verdict": verdict,
                     "precision": _precision(c),
                     **{k: error_number(error, k) for k in _ERROR_NUMBERS},
                     "error_note": error_note(error), "floor": floor})
    for row in rows:
        row.update(disturbed(result.round_causes))
    return rows


def disturbed(round_causes: Sequence[list[str] | None]) -> dict[str, Any]:
    """``disturbed_rounds`` (how many rounds named a cause) and ``causes`` (which, in
    :data:`mlprof.measure.causes.CAUSES` order, comma-separated) of one batch size's rounds;
    None and "" where no round was judged (no ``/proc``, a result of an older mlprof)."""
    from mlprof.measure.causes import CAUSES

    judged = [c for c in round_causes if c is not None]
    if not judged:
        return {"disturbed_rounds": None, "causes": ""}
    named = {n for c in judged for n in c}
    return {"disturbed_rounds": sum(1 for c in judged if c),
            "causes": ",".join(n for n in (*CAUSES, *sorted(named - set(CAUSES)))
                               if n in named)}


def table_csv(rows: Sequence[dict[str, Any]]) -> str:
    """The comparison table as CSV (:data:`TABLE_COLUMNS`)."""
    out = io.StringIO()
    w = csv.DictWriter(out, TABLE_COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if v is None else f"{v:.6g}" if isinstance(v, float) else v)
                    for k, v in r.items()})
    return out.getvalue()


def rounds_csv(results: Sequence[InterleavedResult]) -> str:
    """Every round median (:data:`ROUNDS_COLUMNS`): ``batch_size,round,position,config,
    median_ms`` and the round's ``contended`` (True/False; empty: not judged) and ``causes``
    (comma-separated, quoted)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(ROUNDS_COLUMNS)
    for res in results:
        for r, order in enumerate(res.orders):
            named = res.round_causes[r] if r < len(res.round_causes) else None
            for pos, j in enumerate(order):
                w.writerow([res.batch_size, r, pos, res.configs[j].label,
                            f"{res.round_medians_ms[r, j]:.6f}",
                            "" if named is None else bool(named), ",".join(named or ())])
    return out.getvalue()


def read_rounds(path: str) -> list[dict[str, Any]]:
    """The rows of a rounds CSV (:func:`rounds_csv`), typed: ``contended`` a bool or None (not
    judged, and in a CSV of an older mlprof, which has no such column), ``causes`` a list."""
    text = ingest.read_text(path, ingest.MAX_RECORD_BYTES, what="a rounds table")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    for i, r in enumerate(rows):
        try:
            if None in r or None in r.values():
                raise TypeError("extra or missing columns")
            for k in ("batch_size", "round", "position"):
                r[k] = int(r[k])
            r["median_ms"] = float(r["median_ms"])
            flag = r.get("contended", "")
            if flag not in ("", "True", "False"):
                raise ValueError("contended")
            r["contended"] = None if flag == "" else flag == "True"
            r["causes"] = [c for c in r.get("causes", "").split(",") if c]
        except (KeyError, TypeError, ValueError) as e:
            raise MLProfError(f"row {i + 2}: bad or missing field {e}", path) from None
    return rows


def read_table(path: str) -> list[dict[str, Any]]:
    """The rows of a comparison table written by :func:`table_csv`."""
    text = ingest.read_text(path, ingest.MAX_RECORD_BYTES, what="a comparison table")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    for i, r in enumerate(rows):
        try:
            for k in ("speedup", "ci_low", "ci_high", "median_ms"):
                r[k] = float(r[k])
            rounds = int(r["rounds"])
            r["batch_size"], r["rounds"] = int(r["batch_size"]), rounds
            r["significant"] = r["significant"] == "True"

            if rounds < MIN_ROUNDS and r["verdict"] != "reference":
                # a table of an older mlprof, from fewer rounds than an interval needs
                r["significant"], r["verdict"] = False, TOO_FEW
            if None in r or None in r.values():
                raise TypeError("extra or missing columns")
            for k in _NEWER_COLUMNS:  # absent from older tables, empty at fp32
                r.setdefault(k, "")
            r["precision"] = r["precision"] or "fp32"
            for k in _ERROR_NUMBERS:
                r[k] = float(r[k]) if r[k] != "" else None
            r["disturbed_rounds"] = (int(r["disturbed_rounds"]) if r["disturbed_rounds"] != ""
                                     else None)
            floor = float(r["floor"]) if r["floor"] != "" else None
            if floor is not None and not 0 <= floor <= 10:
                raise ValueError("floor")
            r["floor"] = floor
            if r["error_note"] == "" and r["max_abs_error"] == math.inf:
                r["error_note"] = "inf"  # a table of an older mlprof
        except (KeyError, TypeError, ValueError) as e:
            raise MLProfError(f"row {i + 2}: bad or missing field {e}", path) from None
    return rows


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """The table as text, one line per configuration and batch size; then, once, the noise
    floor the verdicts were judged by, or that the host is not calibrated (no row has a
    floor: a table of this host before CalibrateNoise, or of an older mlprof)."""
    from mlprof.measure.noise import NOT_CALIBRATED_SHORT, percent
    from mlprof.measure.trust import NOT_MEASURABLE, row_not_measurable
    from mlprof.model.precision import NONFINITE

    errors = any(r.get("max_abs_error") is not None for r in rows)
    judged = any(r.get("disturbed_rounds") is not None for r in rows)
    head = f"{'bs':>5}  {'config':<28} {'speed-up':>8}  {'95% CI':<17} {'verdict':<15}"
    if errors:
        head += f" {'max abs err':>11}  {'top-1':>5}"
    if judged:
        head += "  disturbed rounds"
    lines = [head.rstrip()]
    for r in rows:
        speedup = f"{r['speedup']:>8.3f}  [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        if r.get("verdict") != "reference" and row_not_measurable(round_trust(r)):
            speedup = f"{NOT_MEASURABLE:<{len(speedup)}}"
        line = (f"{r['batch_size']:>5}  {r['config'][:28]:<28} {speedup}  "
                f"{r['verdict']:<15}")
        if errors:
            err, top = "", ""
            if r.get("max_abs_error") is not None:
                top1 = r.get("top1_agreement")
                err = (NONFINITE.get(r.get("error_note") or "", "")
                       or f"{r['max_abs_error']:.3g}")
                top = "" if top1 is None else f"{top1:.3f}"
            line += f" {err:>11}  {top:>5}"
        if judged:
            line += f"  {disturbed_text(r)}"
        lines.append(line.rstrip())
    floors = {r["batch_size"]: r["floor"] for r in rows if r.get("floor") is not None}
    if floors:
        lines.append("verdicts judged against this host's noise floor: "
                     + ", ".join(f"{percent(f)} % at batch size {bs}"
                                 for bs, f in sorted(floors.items()))
                     + " (a significant speed-up within it: within this host's noise)")
    elif rows:
        lines.append(f"noise floor: {NOT_CALIBRATED_SHORT} (verdicts by the interval alone)")
    return "\n".join(lines)


def round_trust(row: dict[str, Any]) -> dict[str, Any]:
    """A comparison row as the trust rules read it (:mod:`mlprof.measure.trust`): contended
    when a round of it named a cause, its band the speed-up's interval."""
    return {**row, "contended": bool(row.get("disturbed_rounds"))}


def disturbed_text(row: dict[str, Any]) -> str:
    """``3 of 20: cpu-wait, gc``, ``0 of 20``, or empty where the rounds were not judged."""
    n = row.get("disturbed_rounds")
    if n is None:
        return ""
    causes = ", ".join(c for c in str(row.get("causes") or "").split(",") if c)
    return f"{n} of {row['rounds']}" + (f": {causes}" if n and causes else "")
