"""One generation point (a prompt length and a batch size) in a child process, under the
machine-wide measurement lock: the decoder loaded, every runtime opened, warmed up and timed in
interleaved rounds, then the tokens checked against the reference runtime.

Why interleaved: two runtimes timed one after the other on this shared 2-vCPU VM see different
machines (a neighbour's burst, a frequency change); in rounds each runtime generates ``n_calls``
times in turn, the order rotating each round, so a slow minute costs every runtime alike and
the paired per-round ratios give the speed-up intervals. The rounds continue past
``--interleave`` until ``--min-duration`` seconds have passed (at most
:data:`~mlprof.measure.generation.settings.MAX_ROUNDS`).

The cause record (:func:`mlprof.measure.contention.environment`) covers the timed rounds only
(snapshots before the first and after the last), as MeasureRuntime's covers its timed loop; the
exports and warm-up are outside it.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as _dt
import functools
import io
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlprof.errors import MLProfError
from mlprof.measure.generation.settings import MAX_ROUNDS, GenerationSettings
from mlprof.measure.generation.timing import TimedGeneration

#: the columns of a point's CSV: one row per generated token of every timed call (the time in
#: ms from the call's start when that step's tokens had been sampled; step 0 is the TTFT)
COLUMNS = ("runtime", "round", "call", "step", "token_ms", "e2e_ms")


@dataclass
class GenerationResult:
    """One MeasureGeneration point: the per-token times of every timed call (``calls``: by
    runtime, in the order made, each ``(round, TimedGeneration)``) and the record (without
    its ``task``)."""

    calls: dict[str, list[tuple[int, TimedGeneration]]]
    record: dict[str, Any] = field(default_factory=dict)

    def csv_text(self) -> str:
        """The per-token times as CSV (ms, microsecond resolution)."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(COLUMNS)
        for runtime, calls in self.calls.items():
            for i, (rnd, t) in enumerate(calls):
                e2e = f"{t.e2e_ns / 1e6:.4f}"
                for step, ns in enumerate(np.asarray(t.token_ns).tolist()):
                    w.writerow([runtime, rnd, i, step, f"{ns / 1e6:.4f}", e2e])
        return out.getvalue()


def round_order(runtimes: tuple[str, ...], rnd: int) -> tuple[str, ...]:
    """The order of round ``rnd``: the runtimes rotated by ``rnd`` (each runtime goes first
    once every ``len(runtimes)`` rounds, so none always follows the same other one)."""
    k = rnd % len(runtimes)
    return runtimes[k:] + runtimes[:k]


def _quiet_libraries() -> None:
    """transformers' weight-loading bars and advice, and the tracers' warnings while a backend
    exports, are not this tool's output: the user saw them between the progress lines."""
    import warnings

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", message=".*[Tt]race.*")
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def _one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception as one line of at most ``limit`` characters (its type, unless it is the
    tool's own error, and its message's first line)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if not isinstance(exc, MLProfError):
        text = f"{type(exc).__name__}: {text}"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _tell(rep: Any, runtime: str, message: str) -> None:
    """A backend's progress (an export's phase) under its runtime's name (its own
    ``, 4.5 s elapsed`` dropped: the point's line says how long the point has taken)."""
    rep.update(f"{runtime}: {re.sub(r', [0-9.]+ s elapsed.*$', '', message)}")


def _rss_mb() -> float | None:
    """This process's resident memory now (MiB), from ``/proc/self/status``."""
    from mlprof.sysinfo import status_mb

    rss = status_mb("VmRSS")
    return None if rss is None else round(rss, 1)


def measure_point(model_file: str, settings: GenerationSettings, cache_dir: str,
                  model_identity: Mapping[str, Any] | None = None,
                  progress: Callable[[float, str], None] | None = None) -> GenerationResult:
    """Measure one point (``settings``: one prompt length and batch size) in this process.

    Phases, each reported through ``progress`` (:class:`~mlprof.progress.Progress`:
    at least every 1.5 s, so the parent logs a line at least every 5 s): loading the decoder,
    opening each runtime (an export the first time: tens of seconds), warm-up, round k of n,
    the teacher-forced check."""
    from mlprof.measure.contention import environment, snapshot
    from mlprof.measure.generation import agreement as agree
    from mlprof.measure.generation import metrics as gm
    from mlprof.measure.generation.prompts import prompt_ids
    from mlprof.measure.generation.timing import open_backend
    from mlprof.measure.provenance import measurement_header
    from mlprof.model.decoder import load_decoder
    from mlprof.progress import Progress
    from mlprof.results.records import ModelIdentity
    from mlprof.sysinfo import peak_rss_mb

    s = settings
    prompt, batch, new = s.prompt_length, s.batch_size, s.new_tokens
    started = _dt.datetime.now(_dt.timezone.utc)
    backends: dict[str, Any] = {}
    _quiet_libraries()
    with Progress(progress) as rep:
        rep.phase("loading the decoder")
        decoder = load_decoder(model_file, progress=lambda _f, m: rep.update(f"decoder: {m}"))
        s.check_context(decoder.max_context, model_file)
        input_ids = prompt_ids(decoder.vocab_size, batch, prompt,
                               special_ids=decoder.special_ids)
        opened: dict[str, dict[str, Any]] = {}
        failed: list[dict[str, str]] = []
        try:
            for rt in s.runtimes:
                rss0 = _rss_mb()
                t0 = time.perf_counter()
                rep.phase(f"opening {rt} (an export the first time)")
                try:
                    backends[rt] = open_backend(
                        rt, decoder, threads=s.threads, cache_dir=cache_dir,
                        precision=s.precision, progress=functools.partial(_tell, rep, rt))
                    open_s = time.perf_counter() - t0
                    for i in range(s.warmup):
                        rep.update(f"warm-up of {rt}, call {i + 1} of {s.warmup}")
                        backends[rt].generate(input_ids, new)
                except Exception as exc:  # noqa: BLE001 - this runtime cannot run this model
                    # (onnxruntime-genai's builder has no GPT-2, OpenVINO cannot trace
                    # Mistral's sliding window here): it costs its own row, not the point
                    failed.append({"runtime": rt, "error": _one_line(exc)})
                    if rt in backends:
                        backends.pop(rt).close()
                    continue
                rss1 = _rss_mb()
                opened[rt] = {"open_s": round(open_s, 3), "peak_rss_mb": peak_rss_mb(),
                              "rss_growth_mb": None if rss0 is None or rss1 is None
                              else round(rss1 - rss0, 1)}
            ran = tuple(rt for rt in s.runtimes if rt in backends)
            if not ran:
                raise MLProfError("no runtime could run " + os.path.basename(model_file) + ": "
                                  + "; ".join(f"{f['runtime']}: {f['error']}" for f in failed))
            # the runtimes that ran (the reference: torch if it ran, else the first that did)
            s = dataclasses.replace(s, runtimes=ran)
            calls: dict[str, list[tuple[int, TimedGeneration]]] = {rt: [] for rt in s.runtimes}
            start = snapshot()
            t_start = time.monotonic()
            rnd = 0
            while rnd < s.interleave or (time.monotonic() - t_start < s.min_duration
                                         and rnd < MAX_ROUNDS):
                planned = max(s.interleave, rnd + 1)
                for rt in round_order(s.runtimes, rnd):
                    for _ in range(s.n_calls):
                        rep.update(f"round {rnd + 1} of {planned}: {rt}",
                                   fraction=rnd / planned)
                        calls[rt].append((rnd, backends[rt].generate(input_ids, new)))
                rnd += 1
            end = snapshot()
            env = environment(start, end, planned_threads=float(s.threads or 1))
            rep.phase("checking the tokens (teacher-forced, against "
                      f"{s.reference})")
            ref_tokens = calls[s.reference][0][1].tokens
            agreements = {rt: None if rt == s.reference else agree.teacher_forced(
                backends[s.reference], backends[rt], input_ids, ref_tokens,
                other_tokens=calls[rt][0][1].tokens).to_json() for rt in s.runtimes}
            entries = []
            for rt in s.runtimes:
                m = gm.generation_metrics([t for _, t in calls[rt]], runtime=rt,
                                          batch_size=batch, prompt_length=prompt)
                entries.append({"runtime": rt, "version": backends[rt].version,
                                "info": {**backends[rt].info(), **opened[rt]},
                                "metrics": m.to_json(), "agreement": agreements[rt],
                                "peak_rss_mb": opened[rt]["peak_rss_mb"],
                                "calls": len(calls[rt])})
            def by_round(rt: str) -> list[list[TimedGeneration]]:
                return [[t for r, t in calls[rt] if r == k] for k in range(rnd)]

            speedups = [gm.paired_speedup(
                by_round(s.reference), by_round(rt), reference=s.reference, runtime=rt,
                metric=metric, batch_size=batch, prompt_length=prompt).to_json()
                for rt in s.runtimes if rt != s.reference
                for metric in ("ttft_ms", "tpot_ms", "decode_tokens_per_s")]
        finally:
            for b in backends.values():
                b.close()
    header = measurement_header(
        started=started, device="cpu", threads=s.threads, settings=settings.key(),
        precision={"precision": s.precision},
        model={"name": decoder.name, "source": decoder.source, "hf_dir": decoder.hf_dir,
               "content_hash": decoder.content_hash, "architecture": decoder.architecture,
               "n_params": decoder.n_params, "vocab_size": decoder.vocab_size,
               "max_context": decoder.max_context},
        model_identity=ModelIdentity(**model_identity) if model_identity else None,
        batch_size=batch, events_per_call=batch, environment=env)
    record = {**header.to_json(),
              "point": {"prompt_length": prompt, "batch_size": batch, "new_tokens": new},
              "reference": s.reference, "rounds": rnd, "runtimes": entries,
              "speedups": speedups, "failed": failed, "formulas": dict(gm.FORMULAS)}
    return GenerationResult(calls, record)


def generation_timeout(settings: GenerationSettings) -> float:
    """The timeout of one point's child: ``$MLP_TIMEOUT`` (default 600 s) per runtime (each
    may export first: the bundled model's ONNX and OpenVINO exports take tens of seconds
    here, a corpus decoder minutes)."""
    from mlprof.measure.isolate import default_timeout

    return default_timeout() * len(settings.runtimes)


def measure_generation_isolated(model_file: str, settings: GenerationSettings, cache_dir: str,
                                *, model_identity: Mapping[str, Any] | None = None,
                                progress: Callable[[float, str], None] | None = None,
                                timeout: float | None = None) -> GenerationResult:
    """One point in a child process (:func:`~mlprof.measure.isolate.run_isolated`, torch
    preloaded), under the machine-wide measurement lock, killed after ``timeout`` (default
    :func:`generation_timeout`)."""
    from mlprof.measure.isolate import run_isolated
    from mlprof.measure.lock import measurement_lock

    label = (f"{os.path.basename(model_file)} generating, prompt {settings.prompt_length}, "
             f"batch {settings.batch_size}")
    with measurement_lock(label) as lock:
        result = run_isolated(measure_point, {
            "model_file": model_file, "settings": settings, "cache_dir": cache_dir,
            "model_identity": dict(model_identity) if model_identity else None},
            timeout=generation_timeout(settings) if timeout is None else timeout,
            progress=progress, label=label, torch=True)
    result.record["lock_wait_s"] = lock.wait_s
    return result


def write_generation(result: GenerationResult, paths: Mapping[str, str], **extra: Any) -> None:
    """The CSV, then the record (``extra``: the task, the batch job), each atomically."""
    from mlprof.results import records
    from mlprof.util import write_json_atomic, write_text_atomic

    write_text_atomic(paths["csv"], result.csv_text())
    write_json_atomic(paths["json"], records.stamp({**result.record, **extra}, "generation"))


def read_generation(json_path: str) -> dict[str, Any]:
    """A generation record, checked (:class:`mlprof.results.records.GenerationRecord`), as
    JSON of this format; a one-line :class:`~mlprof.errors.CorruptResult` naming the file and
    the field."""
    from mlprof import ingest
    from mlprof.errors import CorruptResult, MLProfError
    from mlprof.results import records

    try:
        rec = ingest.load_json(json_path)
    except MLProfError as e:
        raise CorruptResult(e.message, json_path) from None
    return records.GenerationRecord.from_json(rec, json_path).to_json()


def prepare_decoder(model_file: str, settings: GenerationSettings,
                    progress: Callable[[float, str], None] | None = None) -> Any:
    """The :class:`~mlprof.model.decoder.Decoder` of ``model_file``, refused before anything is
    saved when it is not a decoder or when ``settings``' longest prompt and new tokens exceed
    its context (one line naming the file and the option); otherwise cached in the store as
    :func:`measure_point` would cache it (which then finds it: 0.34 s instead of 4.2 s).

    For the task's check before any branch runs, in a child
    (:func:`~mlprof.measure.isolate.run_isolated`): a branch that loads a decoder longer than
    the prompt allows failed only after its failure record was written."""
    from mlprof.model.decoder import load_decoder

    _quiet_libraries()
    return load_decoder(model_file, progress=progress,
                        check=lambda d: settings.check_context(d.max_context, model_file))
