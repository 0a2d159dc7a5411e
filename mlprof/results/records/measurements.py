"""The records of a measurement's branches: MeasureRuntime's (``runtime_bs_<N>.json``),
ProfileRuntime's, MeasurePeak's, CompareInterleaved's and CalibrateNoise's, each a frozen
dataclass checked on read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from mlprof.errors import CorruptResult
from mlprof.results.records.core import (
    FORMAT_VERSION,
    MAX_RECORD_BATCH_SIZE,
    Header,
    _check_format,
    _Fields,
    _Record,
    format_version,
)
from mlprof.runtimes import COMPILE_CACHE_STATES

# --- branch, profile and peak records ------------------------------------------------------------

@dataclass(frozen=True)
class BranchRecord(_Record):
    """A MeasureRuntime branch's provenance (``runtime_bs_<N>.json``): its :class:`Header` and
    what the timed loop recorded, every field checked by :meth:`from_json`; ``data``: the record
    as read (:meth:`to_json` keeps every field)."""

    KIND: ClassVar[str] = "branch"

    header: Header
    batch_size: int
    n_samples: int
    session_creation_ms: float | None = None
    first_call_ms: float | None = None
    #: a compiling runtime's compile (or load from the store's cache), before the first call
    #: and apart from it (:class:`mlprof.runtimes.base.Compiled`; None for other runtimes and
    #: records written before: their torch-compile ``first_call_ms`` includes the compile)
    compile_s: float | None = None
    #: ``hit``, ``miss`` or ``none`` (:data:`mlprof.runtimes.COMPILE_CACHE_STATES`)
    compile_cache: str | None = None
    #: how it compiled (``runtime_settings.compile.mode``: torch-compile's ``aot ...`` package or
    #: ``jit ...``): one printable line of at most :data:`MAX_COMPILE_MODE` characters, since
    #: reports and event lines show it (None for other runtimes and older records)
    compile_mode: str | None = None
    warmup_ms: float | None = None
    rounds: int | None = None
    loop_wall_s: float | None = None
    timed_sum_s: float | None = None
    lock_wait_s: float | None = None
    format: int = FORMAT_VERSION
    data: Mapping[str, Any] | None = None

    @property
    def settings(self) -> Mapping[str, Any]:
        """The measurement settings (always there: a branch without them does not read)."""
        return self.header.settings or {}

    @property
    def contended(self) -> bool:
        """Other processes used the CPUs during the timed loop (``environment.contended``)."""
        return bool((self.header.environment or {}).get("contended") is True)

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None) -> BranchRecord:
        """The branch of ``obj`` (format 0 or 1); a :class:`~mlprof.errors.CorruptResult`
        naming ``file`` and the first field that is missing, of the wrong type or out of
        range."""
        f, fmt, header = cls._open(obj, file)
        settings = f.sub("settings", required=True)
        assert settings is not None
        bs = settings.integer("batch_size", 1, MAX_RECORD_BATCH_SIZE, required=True) or 1
        return cls(
            header, bs, f.integer("n_samples", 1, required=True) or 1,
            session_creation_ms=f.number("session_creation_ms", none=True),
            first_call_ms=f.number("first_call_ms", none=True),
            compile_s=f.number("compile_s", none=True),
            compile_cache=f.text("compile_cache", COMPILE_CACHE_STATES),
            compile_mode=_compile_mode(f),
            warmup_ms=f.number("warmup_ms", none=True),
            rounds=f.integer("rounds", none=True),
            loop_wall_s=f.number("loop_wall_s", none=True),
            timed_sum_s=f.number("timed_sum_s", none=True),
            lock_wait_s=f.number("lock_wait_s", none=True), format=fmt, data=obj)


#: the longest ``runtime_settings.compile.mode`` a branch record may hold
MAX_COMPILE_MODE = 100


def _compile_mode(f: _Fields) -> str | None:
    """``runtime_settings.compile.mode`` of a branch, checked (see ``BranchRecord.compile_mode``);
    None where a runtime records no compile."""
    settings = f.sub("runtime_settings")
    compiled = settings.sub("compile") if settings is not None else None
    if compiled is None:
        return None
    mode = compiled.text("mode")
    if mode is not None and not (0 < len(mode) <= MAX_COMPILE_MODE and mode.isprintable()):
        raise CorruptResult(f"not one printable line of 1 to {MAX_COMPILE_MODE} characters: "
                            f"{mode[:40]!r}", f.file, "runtime_settings.compile.mode")
    return mode


@dataclass(frozen=True)
class ProfileRecord(_Record):
    """A ProfileRuntime branch's provenance (``profile_bs_<N>_<budget>.json``): its
    :class:`Header`, the profiler and what the profiled calls took, every field checked by
    :meth:`from_json`."""

    KIND: ClassVar[str] = "profile"

    header: Header
    profiler: str
    batch_size: int
    n_profiled_calls: int
    wall_ms: tuple[float, ...]
    wall_ms_per_call: float
    op_ms_per_call: float
    coverage: float
    overhead_ms_per_call: float | None = None
    operator_coverage: float | None = None
    warmup_calls: int | None = None
    budget_s: float | None = None
    cut_by_budget: bool | None = None
    format: int = FORMAT_VERSION
    data: Mapping[str, Any] | None = None

    @property
    def contended(self) -> bool:
        """Other processes used the CPUs during the profiled calls (``environment``; a profile
        written before it was recorded: False)."""
        return bool((self.header.environment or {}).get("contended") is True)

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None) -> ProfileRecord:
        f, fmt, header = cls._open(obj, file)
        for k in ("runtime", "runtime_version"):
            f.text(k, required=True, none=False)
        walls = f.items("wall_ms", required=True, none=False) or []
        for i, w in enumerate(walls):
            _Fields({f"wall_ms[{i}]": w}, file).number(f"wall_ms[{i}]")
        f.integer("n_op_types", none=True)
        return cls(
            header, f.text("profiler", required=True, none=False) or "",
            f.integer("batch_size", 1, MAX_RECORD_BATCH_SIZE, required=True) or 1,
            f.integer("n_profiled_calls", required=True) or 0,
            tuple(float(w) for w in walls),
            float(f.number("wall_ms_per_call", required=True) or 0.0),
            float(f.number("op_ms_per_call", required=True) or 0.0),
            float(f.number("coverage", required=True) or 0.0),
            overhead_ms_per_call=f.number("overhead_ms_per_call", -1e12, none=True),
            operator_coverage=f.number("operator_coverage", none=True),
            warmup_calls=f.integer("warmup_calls", none=True),
            budget_s=f.number("budget_s", none=True),
            cut_by_budget=f.boolean("cut_by_budget"), format=fmt, data=obj)


@dataclass(frozen=True)
class PeakRecord(_Record):
    """A MeasurePeak record (``peak.json``): its :class:`Header` and the GEMM peak, every field
    checked by :meth:`from_json`."""

    KIND: ClassVar[str] = "peak"

    header: Header
    peak_gflops: float
    spread: float | None = None
    n: int | None = None
    stable: bool | None = None
    contended: bool = False
    lock_wait_s: float | None = None
    format: int = FORMAT_VERSION
    data: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None) -> PeakRecord:
        f, fmt, header = cls._open(obj, file)
        for i, size in enumerate(f.items("sizes") or ()):
            sf = _Fields(size, file, f"sizes[{i}].", what=f"sizes[{i}]")
            sf.integer("n", none=True)
            sf.number("median_gflops", none=True)
        for i, a in enumerate(f.items("attempts") or ()):
            af = _Fields(a, file, f"attempts[{i}].", what=f"attempts[{i}]")
            af.number("peak_gflops", none=True)
            af.boolean("contended")
            af.number("other_cpu_cores", hi=1e9, none=True)
        f.text("benchmark")
        return cls(
            header, float(f.number("peak_gflops", 0.0, lo_open=True, required=True) or 0.0),
            spread=f.number("spread", none=True), n=f.integer("n", none=True),
            stable=f.boolean("stable"), contended=bool(f.boolean("contended")),
            lock_wait_s=f.number("lock_wait_s", none=True), format=fmt, data=obj)


# --- interleaved comparisons (CompareInterleaved) ------------------------------------------------

@dataclass(frozen=True)
class InterleavedRun:
    """One batch size of an interleaved comparison: its :class:`Header` (no one runtime: each
    configuration names its own), the rounds and the configurations, checked."""

    header: Header
    rounds: int
    configs: tuple[Mapping[str, Any], ...]
    method: str | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None, where: str) -> InterleavedRun:
        f = _Fields(obj, file, where + ".", what=where)
        header = Header.from_json(obj, file, where + ".")
        configs = f.items("configs", required=True, none=False) or []
        for i, c in enumerate(configs):
            cf = _Fields(c, file, f"{where}.configs[{i}].", what=f"{where}.configs[{i}]")
            for k in ("label", "model", "runtime", "runtime_version", "model_file",
                      "model_sha256"):
                cf.text(k)
            cf.mapping("runtime_settings")
            cf.mapping("settings")
            cf.mapping("error_vs_fp32")
            cf.texts("script_args")
        f.number("started_unix", none=True)
        f.number("finished_unix", none=True)
        f.boolean("interleaved")
        return cls(header, f.integer("rounds", 1, required=True) or 1, tuple(configs),
                   f.text("method"))


@dataclass(frozen=True)
class InterleavedRecord(_Record):
    """A CompareInterleaved record (``provenance_<bs>_il<R>.json``): the task, the setting
    compared and one :class:`InterleavedRun` per batch size, every field checked by
    :meth:`from_json`."""

    KIND: ClassVar[str] = "interleaved"

    runs: Mapping[int, InterleavedRun]
    compared: Mapping[str, Any] | None = None
    format: int = FORMAT_VERSION
    data: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None) -> InterleavedRecord:
        f = _Fields(obj, file)
        fmt = _check_format(obj, "interleaved", file)
        f.boolean("interleaved")
        f.mapping("task")
        compared = f.sub("compared")
        if compared is not None:
            compared.text("setting")
            compared.items("values")
        by_bs = f.sub("batch_sizes", required=True)
        assert by_bs is not None
        runs: dict[int, InterleavedRun] = {}
        for key, run in by_bs.obj.items():
            where = f"batch_sizes.{key}"
            if not (isinstance(key, str) and key.isdigit()
                    and 1 <= int(key) <= MAX_RECORD_BATCH_SIZE):
                raise CorruptResult(f"not a batch size: {key!r}", file, where)
            runs[int(key)] = InterleavedRun.from_json(run, file, where)
        return cls(runs, None if compared is None else compared.obj, fmt, obj)


# --- noise floors (CalibrateNoise) ------------------------------------------------------------

#: the most A/A pairs of one class a noise record may hold (CalibrateNoise's ``--pairs`` bound)
NOISE_MAX_PAIRS = 1000
#: the most classes of configuration in one noise record
NOISE_MAX_CLASSES = 64


@dataclass(frozen=True)
class NoiseClass:
    """The floor of one class of configuration (a call time and a thread count): A/A pairs of
    one configuration against itself, interleaved in a fresh random order each round.

    ``floor`` is the 95th percentile of ``|ratio - 1|`` over the pairs (relative: 0.03 is
    3 %), ``ci_low``/``ci_high`` its bootstrap 95 % interval; ``call_ms`` the configuration's
    median call time, which chooses the class a measurement is judged by."""

    call_ms: float
    threads: int
    pairs: int
    floor: float
    ci_low: float
    ci_high: float
    median_abs: float | None = None
    model: str | None = None
    runtime: str | None = None
    batch_size: int | None = None
    ratios: tuple[float, ...] | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None, where: str) -> NoiseClass:
        f = _Fields(obj, file, where + ".", what=where)
        floor = float(f.number("floor", 0.0, 10.0, required=True) or 0.0)
        low = float(f.number("ci_low", 0.0, 10.0, required=True) or 0.0)
        high = float(f.number("ci_high", 0.0, 10.0, required=True) or 0.0)
        if not low <= floor <= high:
            raise CorruptResult(f"floor {floor} is outside its interval [{low}, {high}]",
                                file, where + ".floor")
        ratios = f.items("ratios")
        if ratios is not None:
            if len(ratios) > NOISE_MAX_PAIRS:
                raise CorruptResult(f"{len(ratios)} ratios, more than {NOISE_MAX_PAIRS}", file,
                                    where + ".ratios")
            rf = _Fields({str(i): r for i, r in enumerate(ratios)}, file, where + ".ratios.")
            for i in range(len(ratios)):
                rf.number(str(i), 0.0, 1e6, lo_open=True, required=True)
        return cls(
            call_ms=float(f.number("call_ms", 0.0, 1e7, lo_open=True, required=True) or 0.0),
            threads=int(f.integer("threads", 1, 4096, required=True) or 1),
            pairs=int(f.integer("pairs", 1, NOISE_MAX_PAIRS, required=True) or 1),
            floor=floor, ci_low=low, ci_high=high,
            median_abs=f.number("median_abs", 0.0, 10.0, none=True),
            model=f.text("model"), runtime=f.text("runtime"),
            batch_size=f.integer("batch_size", 1, MAX_RECORD_BATCH_SIZE, none=True),
            ratios=None if ratios is None else tuple(float(r) for r in ratios))

    def to_json(self) -> dict[str, Any]:
        """The class as JSON (None fields left out)."""
        out = {}
        for fld in fields(self):
            v = getattr(self, fld.name)
            if v is not None:
                out[fld.name] = list(v) if isinstance(v, tuple) else v
        return out


@dataclass(frozen=True)
class NoiseRecord(_Record):
    """A CalibrateNoise record (``noise.json``): the host's :class:`Header`, its fingerprint
    (:func:`mlprof.sysinfo.host_fingerprint`) and id, and the floor of each class of
    configuration, every field checked by :meth:`from_json`.

    The *minimum detectable change* of a measurement on this host is ``2 x floor`` of its
    class (:meth:`class_for`): the alert rule's threshold is never below it, and interleaved
    and ``--compare`` verdicts within the floor say so."""

    KIND: ClassVar[str] = "noise"

    header: Header
    fingerprint: Mapping[str, Any]
    fingerprint_id: str
    classes: tuple[NoiseClass, ...]
    format: int = FORMAT_VERSION
    data: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None) -> NoiseRecord:
        f, _, header = cls._open(obj, file)
        fp = f.mapping("fingerprint", required=True)
        fid = f.text("fingerprint_id", required=True) or ""
        if not (len(fid) == 12 and all(c in "0123456789abcdef" for c in fid)):
            raise CorruptResult(f"fingerprint_id is {fid!r:.40}, not 12 hex digits", file,
                                "fingerprint_id")
        items = f.items("classes", required=True, none=False) or []
        if not items or len(items) > NOISE_MAX_CLASSES:
            raise CorruptResult(f"{len(items)} classes, expected 1 to {NOISE_MAX_CLASSES}",
                                file, "classes")
        classes = tuple(NoiseClass.from_json(c, file, f"classes[{i}]")
                        for i, c in enumerate(items))
        return cls(header, fp or {}, fid, classes, format_version(obj, file), obj)

    def class_for(self, call_ms: float | None = None, threads: int | None = None
                  ) -> NoiseClass:
        """The class a measurement of median call time ``call_ms`` with ``threads`` is judged
        by: of the classes with its thread count (all when none has it), the nearest call time
        on a log scale; without a call time, the class with the highest floor (the
        conservative choice)."""
        pool = [c for c in self.classes if threads is not None and c.threads == threads]
        pool = pool or list(self.classes)
        if call_ms is None or not call_ms > 0 or not math.isfinite(call_ms):
            return max(pool, key=lambda c: c.floor)
        return min(pool, key=lambda c: (abs(math.log(c.call_ms / call_ms)), -c.floor))

    def floor_for(self, call_ms: float | None = None, threads: int | None = None) -> float:
        """The floor (relative) of the class of :meth:`class_for`."""
        return self.class_for(call_ms, threads).floor

    def min_detectable(self, call_ms: float | None = None, threads: int | None = None
                       ) -> float:
        """The smallest change (relative) this host can tell from noise: 2 x the floor."""
        return 2.0 * self.floor_for(call_ms, threads)
