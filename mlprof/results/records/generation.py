"""Generation records (MeasureGeneration, ``generation_p<prompt>_bs<batch>.json``): one point's
runtimes, their agreement with the reference and the paired speed-ups, every number finite.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from mlprof.errors import CorruptResult
from mlprof.results.records.core import (
    FORMAT_VERSION,
    MAX_COUNT,
    Header,
    _Fields,
    _kind,
    _Record,
)

# --- generation (MeasureGeneration) -------------------------------------------------------------

#: what a generation record may hold, and so what a generation point may ask for (the options'
#: bounds, :mod:`mlprof.measure.generation.settings`, name these)
GENERATION_MAX_PROMPT = 32768
GENERATION_MAX_NEW_TOKENS = 4096
GENERATION_MAX_BATCH = 256
#: the most runtimes one generation point compares
GENERATION_MAX_RUNTIMES = 16
#: nesting a generation record's metrics, agreement and speed-ups may have
_MAX_DEPTH = 8


def _finite_tree(value: Any, file: str | None, where: str, depth: int = 0) -> None:
    """Every number below ``value`` (objects and lists of numbers, strings, booleans, null)
    finite; a :class:`~mlprof.errors.CorruptResult` naming the first that is not (``where``:
    its path in the record, ``runtimes[1].metrics.ttft_ms.p50``)."""
    if depth > _MAX_DEPTH:
        raise CorruptResult(f"nested deeper than {_MAX_DEPTH} levels", file, where)
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise CorruptResult(f"a key that is not a string: {k!r}", file, where)
            _finite_tree(v, file, f"{where}.{k}", depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _finite_tree(v, file, f"{where}[{i}]", depth + 1)
    elif isinstance(value, float) and not math.isfinite(value):
        raise CorruptResult(f"not a finite number: {value!r}", file, where)
    elif not isinstance(value, str | int | float | bool | type(None)):
        raise CorruptResult(f"not JSON: {_kind(value)}", file, where)


@dataclass(frozen=True)
class GenerationRuntime:
    """One runtime of a generation point: what it ran with (``info``: the library, versions,
    threads, cache, export), its metrics (TTFT, TPOT, inter-token latency, tokens/s with their
    intervals and formulas: :mod:`mlprof.measure.generation.metrics`' JSON), its teacher-forced
    agreement with the reference runtime (None for the reference itself:
    :mod:`mlprof.measure.generation.agreement`' JSON), its peak resident memory and timed
    calls, checked."""

    runtime: str
    version: str | None
    info: Mapping[str, Any]
    metrics: Mapping[str, Any]
    agreement: Mapping[str, Any] | None
    peak_rss_mb: float | None
    calls: int

    @classmethod
    def from_json(cls, obj: Any, file: str | None, where: str) -> GenerationRuntime:
        f = _Fields(obj, file, where + ".", what=where)
        metrics = f.mapping("metrics", required=True, none=False) or {}
        for k in ("ttft", "tpot"):
            if k not in metrics:
                raise CorruptResult("missing", file, f"{where}.metrics.{k}")
        agreement = f.mapping("agreement")
        for key, tree in (("info", f.mapping("info")), ("metrics", metrics),
                          ("agreement", agreement)):
            _finite_tree(tree, file, f"{where}.{key}")
        return cls(
            runtime=f.text("runtime", required=True, none=False) or "",
            version=f.text("version"), info=f.mapping("info") or {}, metrics=metrics,
            agreement=agreement, peak_rss_mb=f.number("peak_rss_mb", none=True),
            calls=int(f.integer("calls", 1, MAX_COUNT, required=True) or 1))

    def to_json(self) -> dict[str, Any]:
        """The runtime's entry as JSON."""
        return {"runtime": self.runtime, "version": self.version, "info": dict(self.info),
                "metrics": dict(self.metrics),
                "agreement": None if self.agreement is None else dict(self.agreement),
                "peak_rss_mb": self.peak_rss_mb, "calls": self.calls}


@dataclass(frozen=True)
class GenerationRecord(_Record):
    """A MeasureGeneration record (``generation_p<prompt>_bs<batch>.json``): its
    :class:`Header` (no one runtime: each entry names its own; ``settings`` the point's
    options, ``model`` the decoder), the point (prompt length, batch size, new tokens), the
    reference runtime, one :class:`GenerationRuntime` per runtime in the order measured, the
    paired speed-ups of each runtime against the reference with their intervals, and the
    interleaved rounds; every field checked by :meth:`from_json`; ``data``: the record as read
    (:meth:`to_json` keeps every field)."""

    KIND: ClassVar[str] = "generation"

    header: Header
    prompt_length: int
    batch_size: int
    new_tokens: int
    reference: str
    runtimes: tuple[GenerationRuntime, ...]
    speedups: tuple[Mapping[str, Any], ...]
    rounds: int
    format: int = FORMAT_VERSION
    data: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None) -> GenerationRecord:
        """The record of ``obj`` (a parsed ``generation_*.json``); a
        :class:`~mlprof.errors.CorruptResult` naming ``file`` and the first field that is
        missing, of the wrong type or out of range (prompt length 1 to
        :data:`GENERATION_MAX_PROMPT`, new tokens 2 to :data:`GENERATION_MAX_NEW_TOKENS`, batch
        size 1 to :data:`GENERATION_MAX_BATCH`, every number finite, the reference one of the
        runtimes, no runtime twice)."""
        f, fmt, header = cls._open(obj, file)
        point = f.sub("point", required=True)
        assert point is not None
        items = f.items("runtimes", required=True, none=False) or []
        if not 1 <= len(items) <= GENERATION_MAX_RUNTIMES:
            raise CorruptResult(f"{len(items)} runtimes, expected 1 to "
                                f"{GENERATION_MAX_RUNTIMES}", file, "runtimes")
        runtimes = tuple(GenerationRuntime.from_json(r, file, f"runtimes[{i}]")
                         for i, r in enumerate(items))
        names = tuple(r.runtime for r in runtimes)
        if len(set(names)) != len(names):
            raise CorruptResult(f"a runtime twice: {', '.join(names)}", file, "runtimes")
        reference = f.text("reference", names, required=True, none=False) or names[0]
        speedups = f.items("speedups", required=True, none=False) or []
        for i, s in enumerate(speedups):
            sf = _Fields(s, file, f"speedups[{i}].", what=f"speedups[{i}]")
            sf.text("runtime", names, required=True, none=False)
            _finite_tree(s, file, f"speedups[{i}]")
        _finite_tree(f.mapping("formulas"), file, "formulas")
        f.number("lock_wait_s", none=True)
        failed = f.items("failed") or []  # runtimes that could not run this model
        if len(failed) > GENERATION_MAX_RUNTIMES:
            raise CorruptResult(f"{len(failed)} failed runtimes, expected at most "
                                f"{GENERATION_MAX_RUNTIMES}", file, "failed")
        for i, item in enumerate(failed):
            ff = _Fields(item, file, f"failed[{i}].", what=f"failed[{i}]")
            rt = ff.text("runtime", required=True, none=False)
            if rt in names:
                raise CorruptResult(f"{rt!r:.40} both ran and failed", file, f"failed[{i}]")
            ff.text("error", required=True, none=False)
        return cls(
            header=header,
            prompt_length=int(point.integer("prompt_length", 1, GENERATION_MAX_PROMPT,
                                            required=True) or 1),
            batch_size=int(point.integer("batch_size", 1, GENERATION_MAX_BATCH,
                                         required=True) or 1),
            new_tokens=int(point.integer("new_tokens", 2, GENERATION_MAX_NEW_TOKENS,
                                         required=True) or 2),
            reference=reference, runtimes=runtimes, speedups=tuple(speedups),
            rounds=int(f.integer("rounds", 1, MAX_COUNT, required=True) or 1),
            format=fmt, data=obj)
