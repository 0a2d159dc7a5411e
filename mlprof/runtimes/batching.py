"""Batch rules of AOT-compiled models, as CMSSW's ``PhysicsTools/TensorFlowAOT`` (Batching.cc)
defines them: a batch size that was not compiled is composed of compiled ones, the last piece
padded when the sizes sum to more than the batch size.

MLProf's ``--tfaot-batch-rules`` syntax: dash-separated rules ``target:size,size,...``, e.g.
``15:1,2,1,1,2,8-3:ones``; ``N:ones`` is N pieces of 1, ``N:twos`` ceil(N/2) pieces of 2 (the
last one padded when N is odd). Without a rule for a batch size, CMSSW's default: the batch
size itself when it was compiled, else the smallest compiled size repeated, the last one padded.

No TensorFlow here: the tasks check rules before anything runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mlprof.errors import MLProfError

FIELD = "--tfaot-batch-rules"

#: the largest batch size mlprof measures (and the largest target of a rule). Why a bound at
#: all: a batch size is multiplied into the memory of every input (batch size x input size per
#: event) and a ``N:ones`` rule expands into N calls while the scheduler checks the parameters
#: (``1000000000:ones`` ran it out of memory). 65536 is 64 times the largest batch size of the
#: default sweep (1024); the largest rule it allows expands to 65536 pieces (~0.5 MB).
MAX_BATCH_SIZE = 1 << 16

#: the longest rules text read (a rule per compiled batch size fits in far less)
MAX_RULES_CHARS = 4096


@dataclass(frozen=True)
class BatchRule:
    """Compose ``batch_size`` of calls at ``sizes``; the last call is padded by
    ``last_padding`` events (its outputs dropped)."""

    batch_size: int
    sizes: tuple[int, ...]
    last_padding: int = 0

    def __post_init__(self) -> None:
        if not self.sizes:
            raise MLProfError(f"rule for {self.batch_size}: no batch sizes", field=FIELD)
        if self.last_padding >= self.sizes[-1]:
            raise MLProfError(f"rule for {self.batch_size}: padding {self.last_padding} must "
                              f"be smaller than the last size {self.sizes[-1]}", field=FIELD)
        if sum(self.sizes) - self.last_padding != self.batch_size:
            raise MLProfError(f"rule for {self.batch_size}: sizes {list(self.sizes)} minus "
                              f"padding {self.last_padding} do not sum to {self.batch_size}",
                              field=FIELD)

    def text(self) -> str:
        """``15:1,2,4,8`` (the rule as written in MLProf's syntax)."""
        return f"{self.batch_size}:{','.join(map(str, self.sizes))}"

    def pieces(self) -> list[tuple[int, int, int]]:
        """``(start, compiled size, real events)`` of each call."""
        out, start = [], 0
        for i, size in enumerate(self.sizes):
            real = size - (self.last_padding if i == len(self.sizes) - 1 else 0)
            out.append((start, size, real))
            start += real
        return out


_RULE = re.compile(r"\s*(\d+)\s*:\s*(ones|twos|\d+(?:\s*,\s*\d+)*)\s*")


def parse_batch_rules(text: str) -> dict[int, BatchRule]:
    """``"15:1,2,1,1,2,8-3:ones"`` -> {15: BatchRule, 3: BatchRule}; one-line errors naming
    the option for bad syntax, a sum smaller than the target, a padding too large or a target
    given twice."""
    rules: dict[int, BatchRule] = {}
    if not str(text).strip():
        return rules
    if len(str(text)) > MAX_RULES_CHARS:
        raise MLProfError(f"{len(str(text))} characters; the rules have at most "
                          f"{MAX_RULES_CHARS}", field=FIELD)
    for part in str(text).split("-"):
        m = _RULE.fullmatch(part) if part.isascii() else None
        if not m:
            raise MLProfError(f"bad rule {part!r}: write target:size,size,... (e.g. 15:1,2,4,8),"
                              " target:ones or target:twos, rules separated by '-'",
                              field=FIELD)
        target, spec = int(m.group(1)), m.group(2)
        if target < 1:
            raise MLProfError(f"bad rule {part!r}: the target batch size must be >= 1",
                              field=FIELD)
        if target > MAX_BATCH_SIZE:  # before "ones" expands it into that many pieces
            raise MLProfError(f"bad rule {part.strip()!r}: the target batch size must be <= "
                              f"{MAX_BATCH_SIZE}, the largest batch size mlprof measures",
                              field=FIELD)
        if spec == "ones":
            sizes = (1,) * target
        elif spec == "twos":
            sizes = (2,) * ((target + 1) // 2)
        else:
            sizes = tuple(int(s) for s in spec.split(","))
            if min(sizes) < 1 or max(sizes) > MAX_BATCH_SIZE:
                raise MLProfError(f"bad rule {part!r}: sizes must be >= 1 and <= "
                                  f"{MAX_BATCH_SIZE}", field=FIELD)
        if sum(sizes) < target:
            raise MLProfError(f"rule {part.strip()!r}: the sizes sum to {sum(sizes)}, less than "
                              f"the target batch size {target}", field=FIELD)
        if target in rules:
            raise MLProfError(f"two rules for batch size {target}", field=FIELD)
        rules[target] = BatchRule(target, sizes, sum(sizes) - target)
    return rules


def normalized_rules(text: str) -> str:
    """The rules in a canonical form (sorted by target, sizes spelled out): equal rules give
    equal output paths."""
    return "-".join(r.text() for _, r in sorted(parse_batch_rules(text).items()))


def default_rule(batch_size: int, compiled: list[int] | tuple[int, ...]) -> BatchRule:
    """CMSSW's default: the batch size itself when compiled, else the smallest compiled size
    repeated, the last call padded."""
    if batch_size in compiled:
        return BatchRule(batch_size, (batch_size,))
    smallest = min(compiled)
    n, rest = divmod(batch_size, smallest)
    n += 1 if rest else 0
    return BatchRule(batch_size, (smallest,) * n, smallest - rest if rest else 0)


def rule_for(batch_size: int, text: str, compiled: list[int] | tuple[int, ...]) -> BatchRule:
    """The rule used at ``batch_size``: the given one, else the default; a size that was not
    compiled is an error."""
    check_rules(text, compiled)
    return parse_batch_rules(text).get(batch_size) or default_rule(batch_size, compiled)


def check_rules(text: str, compiled: list[int] | tuple[int, ...], where: str | None = None
                ) -> None:
    """Every size of every rule must be a compiled batch size."""
    for rule in parse_batch_rules(text).values():
        bad = sorted(set(rule.sizes) - set(compiled))
        if bad:
            raise MLProfError(f"rule {rule.text()!r} uses batch size(s) {bad} that the model "
                              f"was not compiled for (compilation.batch_sizes: "
                              f"{sorted(compiled)})", where, FIELD)
