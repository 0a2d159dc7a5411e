"""Decoder models for generation (issue 37): a causal language model from a script or a directory.

A decoder is given as a Python script that builds a Hugging Face model (the corpus's
``models/transformers/*.py`` decoders, which build the base model from a config, and the bundled
``models/generation/tiny_llama.py``) or as a directory written by ``save_pretrained``. Either way
it becomes one :class:`Decoder`: a ``save_pretrained`` directory of the causal LM (config and
random weights, seeded) cached by content hash, which every generation runtime loads or exports
from, so torch, ONNX Runtime and OpenVINO run the same weights.

INTERFACE (committed first; filled by the generation work): :class:`Decoder`,
:func:`load_decoder`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Decoder:
    """One causal LM, ready for every generation runtime.

    ``name``: its label (the script's or directory's stem); ``source``: the absolute path the user
    named; ``hf_dir``: a ``save_pretrained`` directory (config.json, weights, generation config)
    holding exactly this model; ``content_hash``: hex digest of its config and weights (identity
    in the store); ``architecture``: e.g. ``LlamaForCausalLM``; ``n_params``; ``vocab_size``;
    ``max_context``: the longest sequence it accepts (prompt + new tokens), from its config."""

    name: str
    source: str
    hf_dir: str
    content_hash: str
    architecture: str
    n_params: int
    vocab_size: int
    max_context: int


def load_decoder(path: str, cache_dir: str | None = None) -> Decoder:
    """The :class:`Decoder` of a script or ``save_pretrained`` directory ``path``; its
    ``hf_dir`` is made once under ``cache_dir`` (default: the store's cache). A path that is not
    a decoder raises a one-line :class:`~mlprof.errors.MLProfError` naming the file."""
    raise NotImplementedError("issue 37: filled by the generation work")
