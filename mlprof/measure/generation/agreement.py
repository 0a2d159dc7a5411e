"""Teacher-forced token agreement of a runtime with the reference runtime (torch), with the
margin rule that makes the check honest on random weights.

Both runtimes get the reference's generated sequence (prompt + its tokens but the last) in one
forward pass; at each generated step the argmax of the two runtimes' logits is compared. With
random weights the reference's margins (top-1 minus top-2 logit) are tiny (issue 37 measured a
median of 3.6e-2 and a minimum of 2e-4), so two correct runtimes that differ by float rounding
(2e-7 between torch and ONNX Runtime / OpenVINO on the tiny Llama) can pick different tokens
where two logits almost tie. A disagreement is therefore an ERROR only where the margin exceeds
10 x the logit difference between the two runtimes (a *decisive* step): the runtimes then
disagree about a token their own rounding cannot explain.

Which logit difference: the runtime's typical one, the median over all steps of the per-step
max |ref - other| (``logit_diff_median``), not the max at the judged step itself. With the
per-step max the rule could never fire: if margin > 10 d with d = max_j |ref_j - other_j|, the
other runtime's top-1 lead is at least margin - 2 d > 8 d > 0, so it cannot pick another token;
every disagreement would be "not decisive" and the check empty. The median is the runtime's
rounding noise, which a single wrong step cannot inflate; a runtime wrong at most steps inflates
it, and then fails the share (>= 99 % of steps agreeing) instead. The largest per-step difference
is reported too (``max_logit_diff``). The first step at which the two runtimes' own free-running
generations differ is reported as information: after one near-tie the sequences legitimately
part.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from mlprof.results.records import MAX_COUNT, _Fields

#: a disagreement is an error where the reference margin exceeds this many times the logit
#: difference between the two runtimes at that step
MARGIN_FACTOR = 10.0


@dataclass(frozen=True)
class Agreement:
    """Teacher-forced agreement of ``runtime`` with ``reference`` over ``steps`` steps (batch x
    new tokens): ``agreeing`` steps with the same argmax (``share`` = agreeing / steps);
    ``decisive`` steps where the margin rule applies (margin > 10 x ``logit_diff_median``), of
    which ``decisive_agreeing`` agree; ``errors`` = decisive - decisive_agreeing; the reference's
    margins (median, min); the median and the largest per-step logit difference;
    ``first_divergence``: the first step
    (0-based) at which the free-running tokens differ in any batch row, None if identical."""

    runtime: str
    reference: str
    steps: int
    agreeing: int
    share: float
    decisive: int
    decisive_agreeing: int
    errors: int
    margin_median: float
    margin_min: float
    logit_diff_median: float
    max_logit_diff: float
    first_divergence: int | None

    def to_json(self) -> dict[str, Any]:
        """The fields as JSON."""
        return asdict(self)

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None,
                  where: str = "agreement") -> Agreement:
        """Read and check (counts consistent, share = agreeing / steps); a bad field raises
        :class:`~mlprof.errors.CorruptResult` naming ``file`` and ``where.field``."""
        f = _Fields(obj, file, where + ".", what=where)
        steps = f.integer("steps", 1, required=True) or 1
        agreeing = f.integer("agreeing", 0, steps, required=True) or 0
        decisive = f.integer("decisive", 0, steps, required=True) or 0
        dec_agree = f.integer("decisive_agreeing", 0, min(decisive, agreeing),
                              required=True) or 0
        errors = f.integer("errors", decisive - dec_agree, decisive - dec_agree,
                           required=True) or 0
        share = f.number("share", 0.0, 1.0, required=True) or 0.0
        if abs(share - agreeing / steps) > 1e-9:
            raise f._bad("share", f"{share} is not agreeing / steps = {agreeing / steps}")
        return cls(runtime=f.text("runtime", required=True) or "",
                   reference=f.text("reference", required=True) or "",
                   steps=steps, agreeing=agreeing, share=share, decisive=decisive,
                   decisive_agreeing=dec_agree, errors=errors,
                   margin_median=f.number("margin_median", required=True) or 0.0,
                   margin_min=f.number("margin_min", required=True) or 0.0,
                   logit_diff_median=f.number("logit_diff_median", required=True) or 0.0,
                   max_logit_diff=f.number("max_logit_diff", required=True) or 0.0,
                   first_divergence=f.integer("first_divergence", 0, MAX_COUNT, none=True))


def first_divergence(ref_tokens: np.ndarray, other_tokens: np.ndarray) -> int | None:
    """The first step (column) where two ``[batch, new_tokens]`` generations differ, or None."""
    diff = np.any(np.asarray(ref_tokens) != np.asarray(other_tokens), axis=0)
    return int(np.argmax(diff)) if diff.any() else None


def compare_logits(ref_logits: np.ndarray, other_logits: np.ndarray, *, runtime: str,
                   reference: str = "torch",
                   first_divergence_step: int | None = None) -> Agreement:
    """The :class:`Agreement` of two runtimes' logits at the generated steps, float arrays
    ``[batch, steps, vocab]`` (the positions that predicted each generated token)."""
    ref = np.asarray(ref_logits, dtype=np.float64)
    oth = np.asarray(other_logits, dtype=np.float64)
    if ref.shape != oth.shape or ref.ndim != 3 or ref.shape[-1] < 2 or ref.size == 0:
        raise ValueError(f"logits must be two equal [batch, steps, vocab>=2] arrays, got "
                         f"{ref.shape} and {oth.shape}")
    agree = ref.argmax(-1) == oth.argmax(-1)
    top2 = np.sort(ref, axis=-1)[..., -2:]
    margin = top2[..., 1] - top2[..., 0]
    diff = np.abs(ref - oth).max(-1)  # per step
    noise = float(np.median(diff))
    decisive = margin > MARGIN_FACTOR * noise
    steps = int(agree.size)
    n_agree = int(agree.sum())
    n_dec = int(decisive.sum())
    dec_agree = int((decisive & agree).sum())
    return Agreement(runtime=runtime, reference=reference, steps=steps, agreeing=n_agree,
                     share=n_agree / steps, decisive=n_dec, decisive_agreeing=dec_agree,
                     errors=n_dec - dec_agree, margin_median=float(np.median(margin)),
                     margin_min=float(margin.min()), logit_diff_median=noise,
                     max_logit_diff=float(diff.max()),
                     first_divergence=first_divergence_step)


def teacher_forced(reference: Any, other: Any, input_ids: np.ndarray, ref_tokens: np.ndarray,
                   other_tokens: np.ndarray | None = None) -> Agreement:
    """Feed both backends (:class:`~mlprof.measure.generation.timing.GenerationBackend`)
    ``input_ids`` + ``ref_tokens[:, :-1]`` and compare their logits at the positions that
    predicted each of the ``new_tokens`` generated tokens (the last prompt position onwards);
    ``other_tokens`` (``other``'s own generation) gives the first free-running divergence."""
    ids = np.asarray(input_ids, dtype=np.int64)
    toks = np.asarray(ref_tokens, dtype=np.int64)
    seq = np.concatenate([ids, toks[:, :-1]], axis=1)
    start = ids.shape[1] - 1
    ref_l = reference.logits(seq)[:, start:, :]
    oth_l = other.logits(seq)[:, start:, :]
    div = None if other_tokens is None else first_divergence(toks, other_tokens)
    return compare_logits(ref_l, oth_l, runtime=other.runtime, reference=reference.runtime,
                          first_divergence_step=div)
