"""The prompts of a generation measurement: seeded random token ids, never a special token.

Prompts are token ids, not text: tokenization is no part of TTFT (issue 37), and a decoder with
random weights has no language to prompt it with. What matters for speed is the prompt's length
and the batch; the ids are drawn uniformly, seeded, so every runtime and every repetition of a
point gets the same prompt.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

#: ids below this are never drawn: most vocabularies keep their padding, beginning and end of
#: sequence tokens there (Llama, Gemma, the bundled tiny_llama: 0-2; OPT: 1-2)
FIRST_ID = 3


def prompt_ids(vocab_size: int, batch_size: int, prompt_length: int, seed: int = 0, *,
               special_ids: Iterable[int] = ()) -> np.ndarray:
    """int64 ``[batch_size, prompt_length]`` token ids, the same for the same arguments.

    Drawn uniformly from ``[3, vocab_size - 1)``: ids 0-2 and the last id (GPT-2's
    ``<|endoftext|>`` is 50256 of 50257) are never drawn, nor any of ``special_ids`` (a
    :class:`~mlprof.model.decoder.Decoder`'s ``special_ids``): an end-of-sequence token inside
    a prompt could end or change a generation, and a padding id could be masked by a runtime.
    """
    vocab_size, batch_size, prompt_length = int(vocab_size), int(batch_size), int(prompt_length)
    if batch_size < 1 or prompt_length < 1:
        raise ValueError(f"batch_size and prompt_length must be >= 1, got {batch_size}, "
                         f"{prompt_length}")
    banned = np.unique(np.asarray([int(i) for i in special_ids], dtype=np.int64))
    allowed = np.arange(FIRST_ID, max(vocab_size - 1, FIRST_ID), dtype=np.int64)
    allowed = allowed[~np.isin(allowed, banned)]
    if allowed.size < 2:
        raise ValueError(f"a vocabulary of {vocab_size} leaves no ids for a prompt")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, allowed.size, size=(batch_size, prompt_length))
    return allowed[picks]
