"""A mixture-of-experts implementation for transformers that exports to ONNX without baking the
routing into the graph.

transformers' ``eager`` experts loop over the experts *hit* by the traced inputs
(``for expert_idx in expert_hit``): the TorchScript exporter unrolls that loop, so the graph
holds the experts the tracing inputs happened to choose, split with their sizes. On other inputs
such a graph is wrong (Mixtral, OLMoE: refused by validation with max abs errors of order 1) or
fails (Qwen2-MoE, PhiMoE, GLM4-MoE: ``Split size 1 exceeds the remaining size``, measured with
the harness' token ids). The default ``grouped_mm`` has no ONNX export (``torch.histc`` and a
custom operator), ``batched_mm`` gathers one weight matrix per token and expert (8 MB each for
a 512x2048 expert: 2 GB for 128 tokens).

``sparse_loop`` below is ``eager`` with the loop over *all* experts: each expert gathers its
tokens with ``torch.where`` (a NonZero in ONNX, so the number of tokens stays dynamic), an expert
no token chose gathers none. It computes exactly what ``eager`` computes, with the same sparse
cost, for any routing. Scripts opt in with ``experts_implementation=SPARSE_LOOP`` after
importing this module (the import registers it).
"""

from __future__ import annotations

from typing import Any

import torch

#: the name scripts pass as ``experts_implementation``
SPARSE_LOOP = "sparse_loop"


def _linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
            transposed: bool) -> torch.Tensor:
    out = x @ weight if transposed else torch.nn.functional.linear(x, weight)
    return out if bias is None else out + bias


def sparse_loop_experts_forward(self: Any, hidden_states: torch.Tensor,
                                top_k_index: torch.Tensor,
                                top_k_weights: torch.Tensor) -> torch.Tensor:
    """transformers' eager experts forward, looping over every expert instead of the hit ones.

    ``self`` is one of transformers' experts modules (``num_experts``, ``gate_up_proj``, ...:
    attributes that :class:`torch.nn.Module` does not declare, hence ``Any``)."""
    final = torch.zeros_like(hidden_states)
    transposed = bool(getattr(self, "is_transposed", False))
    has_gate = bool(getattr(self, "has_gate", True))
    has_bias = bool(getattr(self, "has_bias", False))
    for e in range(self.num_experts):
        token_idx, top_k_pos = torch.where(top_k_index == e)
        state = hidden_states[token_idx]
        if has_gate:
            proj = _linear(state, self.gate_up_proj[e],
                           self.gate_up_proj_bias[e] if has_bias else None, transposed)
            proj = self._apply_gate(proj)
        else:
            proj = _linear(state, self.up_proj[e],
                           self.up_proj_bias[e] if has_bias else None, transposed)
            proj = self.act_fn(proj)
        proj = _linear(proj, self.down_proj[e], self.down_proj_bias[e] if has_bias else None,
                       transposed)
        if getattr(self, "has_post_expert_norm", False):
            proj = self.post_expert_norm(proj)
        proj = proj * top_k_weights[token_idx, top_k_pos, None]
        final = final.index_add(0, token_idx, proj.to(final.dtype))
    return final


def register() -> None:
    """Register ``sparse_loop`` with transformers' experts interface (idempotent)."""
    from transformers.integrations.moe import ExpertsInterface

    ExpertsInterface.register(SPARSE_LOOP, sparse_loop_experts_forward)


register()
