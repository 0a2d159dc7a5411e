"""The options of a generation measurement, each defined once, with their bounds and checks.

:class:`GenerationSettings` defines each option (type, default, command-line option, help):
MeasureGeneration's and PlotGeneration's law parameters are made from its fields
(:mod:`mlprof.tasks.generation`), and an instance is checked once, when it is made, so the
measurement code takes it as it is. Each check raises a one-line
:class:`~mlprof.errors.MLProfError` naming the option. What needs the decoder (a prompt and its
new tokens longer than the model's context) is checked by :meth:`GenerationSettings.check_context`
once the decoder is known, before anything is written.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mlprof.errors import MLProfError
from mlprof.measure.generation.timing import GENERATION_RUNTIMES
from mlprof.measure.settings import one_per_point, store_checked
from mlprof.results import records
from mlprof.runtimes import (
    GENERATION_DEFAULT,
    GENERATION_REFERENCE,
    canonical_runtime,
    runtime_info,
    runtime_names,
)
from mlprof.util import did_you_mean

# Bounds of everything multiplied into memory or time (as mlprof.measure.settings bounds the
# measurement settings, issue 22): a value beyond them is a typo, refused before any branch runs.
# The record's bounds (mlprof.results.records, the layer below) are the same numbers.

#: prompt tokens per sequence: the KV cache grows with it (Llama-class: 2 x layers x heads x
#: head_dim x 4 bytes per token and sequence; the bundled model's context is far below)
MAX_PROMPT_LENGTH = records.GENERATION_MAX_PROMPT
#: new tokens per call: each is a decoding step (the bundled model: ~2-5 ms a step here, so
#: 4096 steps are ~10-20 s a call, times repetitions, rounds and runtimes)
MAX_NEW_TOKENS = records.GENERATION_MAX_NEW_TOKENS
#: sequences per call (the KV cache and the logits grow with it)
MAX_BATCH_SIZE = records.GENERATION_MAX_BATCH
#: untimed calls per runtime before the rounds
MAX_WARMUP = 1000
#: timed calls per runtime and round (each one a whole generation)
MAX_N_CALLS = 10_000
#: interleaved rounds (at least 2: the paired speed-ups need more than one round)
MIN_ROUNDS, MAX_ROUNDS = 2, 1000
#: seconds the rounds run at least (more rounds are added until then)
MAX_MIN_DURATION = 600.0
#: the precisions a generation runtime may be asked for (the backends refuse what they cannot)
PRECISIONS = ("fp32", "fp16")


def _option(default: Any, *, flag: str, help: str, choices: tuple[str, ...] = ()) -> Any:
    """A :class:`GenerationSettings` field: ``flag`` its command-line option, ``help`` the law
    parameter's description."""
    return field(default=default, metadata={"flag": flag, "help": help, "choices": choices})


def _whole(value: Any, flag: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise MLProfError(f"must be a whole number from {lo} to {hi}, got {value!r}",
                          field=flag)
    return value


def _wholes(values: Sequence[Any], flag: str, lo: int, hi: int) -> tuple[int, ...]:
    out: list[int] = []
    for v in values:
        v = _whole(v, flag, lo, hi)
        if v not in out:
            out.append(v)
    if not out:
        raise MLProfError("give at least one", field=flag)
    return tuple(sorted(out))


@dataclass(frozen=True)
class GenerationSettings:
    """What a generation measurement asks for: the points (prompt lengths x batch sizes), the
    new tokens, the runtimes and how they are measured. Checked when made
    (:meth:`__post_init__`): every value is refused in one line naming the option.

    A task's settings hold every prompt length and batch size; :meth:`points` splits them into
    one per branch, the form the measurement takes."""

    prompt_lengths: tuple[int, ...] = _option(
        (16, 128, 512), flag="--prompt-lengths",
        help=f"comma-separated prompt lengths in tokens, one point each with every batch size; "
        f"1 to {MAX_PROMPT_LENGTH}; default: 16,128,512")
    batch_sizes: tuple[int, ...] = _option(
        (1, 4), flag="--batch-sizes",
        help=f"comma-separated batch sizes (sequences per call); 1 to {MAX_BATCH_SIZE}; "
        "default: 1,4")
    new_tokens: int = _option(
        32, flag="--new-tokens",
        help=f"tokens generated per call, exactly (min_new_tokens = max_new_tokens); 2 to "
        f"{MAX_NEW_TOKENS}; default: 32")
    runtimes: tuple[str, ...] = _option(
        GENERATION_DEFAULT, flag="--runtimes",
        help=f"comma-separated generation runtimes ({', '.join(GENERATION_RUNTIMES)}), measured "
        "in interleaved rounds; the first (torch when given) is the reference the others' "
        "tokens are checked against; default: torch,onnxruntime,openvino")
    threads: int = _option(
        1, flag="--threads",
        help="intra-op threads of every runtime (0: the runtime's default); default: 1")
    precision: str = _option(
        "fp32", flag="--precision", choices=PRECISIONS,
        help="precision of the weights and activations; default: fp32")
    # defaults: one call per runtime and round, six rounds. A call of the bundled model
    # generating 32 tokens after 128 at batch 4 takes ~0.1-2.5 s here, so 3 runtimes x 4 points
    # x 6 rounds stay within minutes; the rounds, not repetitions, give the intervals
    warmup: int = _option(
        1, flag="--warmup", help=f"untimed calls per runtime before the rounds; 0 to "
        f"{MAX_WARMUP}; default: 1")
    n_calls: int = _option(
        1, flag="--n-calls", help=f"timed calls (repetitions) per runtime and round; 1 to "
        f"{MAX_N_CALLS}; default: 1")
    min_duration: float = _option(
        0.0, flag="--min-duration", help=f"seconds the rounds run at least (rounds are added "
        f"until then, up to {MAX_ROUNDS}); 0 to {MAX_MIN_DURATION:g}; default: 0")
    interleave: int = _option(
        6, flag="--interleave", help=f"interleaved rounds: each round every runtime generates "
        f"--n-calls times, in rotating order; {MIN_ROUNDS} to {MAX_ROUNDS}; default: 6")

    def __post_init__(self) -> None:
        store_checked(self, _checked(self))

    @property
    def prompt_length(self) -> int:
        """A branch's one prompt length."""
        return one_per_point(self.prompt_lengths, "prompt length per point", "--prompt-lengths")

    @property
    def batch_size(self) -> int:
        """A branch's one batch size."""
        return one_per_point(self.batch_sizes, "batch size per point", "--batch-sizes")

    @property
    def reference(self) -> str:
        """The runtime the others' tokens are checked against: torch when measured, else the
        first one."""
        return GENERATION_REFERENCE if GENERATION_REFERENCE in self.runtimes \
            else self.runtimes[0]

    def points(self) -> list[GenerationSettings]:
        """One per branch: each (prompt length, batch size), prompt lengths first."""
        return [dataclasses.replace(self, prompt_lengths=(p,), batch_sizes=(b,))
                for p in self.prompt_lengths for b in self.batch_sizes]

    def check_context(self, max_context: int, file: str | None = None) -> None:
        """The longest prompt and its new tokens within the decoder's context
        (``max_context``, from its config); a one-line error naming ``file`` (the model) and
        ``--prompt-lengths`` otherwise: a longer sequence fails (or silently wraps its position
        embeddings) in the middle of a run."""
        longest = max(self.prompt_lengths)
        if longest + self.new_tokens > max_context:
            raise MLProfError(f"{longest} prompt tokens + {self.new_tokens} new tokens = "
                              f"{longest + self.new_tokens}, more than the model's context of "
                              f"{max_context} tokens", file, "--prompt-lengths")

    def key(self) -> dict[str, Any]:
        """The settings as JSON (the record's ``settings``)."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v
                for f in dataclasses.fields(self)}


#: the fields of :class:`GenerationSettings` by name
GENERATION_FIELDS: dict[str, dataclasses.Field] = {
    f.name: f for f in dataclasses.fields(GenerationSettings)}


def _checked(s: GenerationSettings) -> dict[str, Any]:
    """The values of ``s`` checked and normalized (see :class:`GenerationSettings`)."""
    from mlprof.measure.settings import check_setting

    out: dict[str, Any] = {
        "prompt_lengths": _wholes(tuple(s.prompt_lengths), "--prompt-lengths", 1,
                                  MAX_PROMPT_LENGTH),
        "batch_sizes": _wholes(tuple(s.batch_sizes), "--batch-sizes", 1, MAX_BATCH_SIZE),
        # TPOT = (E2E - TTFT) / (N - 1): one token has no time per output token
        "new_tokens": _whole(s.new_tokens, "--new-tokens", 2, MAX_NEW_TOKENS),
        "warmup": _whole(s.warmup, "--warmup", 0, MAX_WARMUP),
        "n_calls": _whole(s.n_calls, "--n-calls", 1, MAX_N_CALLS),
        "interleave": _whole(s.interleave, "--interleave", MIN_ROUNDS, MAX_ROUNDS),
        "threads": check_setting("threads", s.threads),
    }
    runtimes: list[str] = []
    for r in s.runtimes:
        name = str(r).strip().lower()
        if any(name in runtime_info(n).names for n in runtime_names()):
            name = canonical_runtime(name)  # an alias: ort -> onnxruntime
        if name not in GENERATION_RUNTIMES:
            hint = did_you_mean(name, GENERATION_RUNTIMES)
            raise MLProfError(f"{r!r} is no generation runtime{hint}; one of "
                              f"{', '.join(GENERATION_RUNTIMES)}", field="--runtimes")
        if name not in runtimes:
            runtimes.append(name)
    if not runtimes:
        raise MLProfError("give at least one", field="--runtimes")
    out["runtimes"] = tuple(runtimes)
    if s.precision not in PRECISIONS:
        raise MLProfError(f"one of {', '.join(PRECISIONS)}, got {s.precision!r}",
                          field="--precision")
    try:
        d = float(s.min_duration)
    except (TypeError, ValueError):
        raise MLProfError(f"not a number: {s.min_duration!r}", field="--min-duration") from None
    if not (math.isfinite(d) and 0 <= d <= MAX_MIN_DURATION):
        raise MLProfError(f"must be 0 to {MAX_MIN_DURATION:g} s, got {s.min_duration}",
                          field="--min-duration")
    out["min_duration"] = d
    return out
