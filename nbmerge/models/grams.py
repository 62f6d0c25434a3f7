"""Activation statistics: the input Gram XᵀX of every linear weight of the open_clip encoder.

Captured with forward pre-hooks. ``nn.MultiheadAttention`` does not call its ``out_proj`` module (it passes the
weight to a functional kernel), so the out-projection's input — the concatenated head outputs — is recomputed
from the block's input with the same math (no mask, no dropout in eval); a test checks it against the real
forward. Grams are sums over all tokens of all examples, in float64, keyed by the weight's own state-dict name
(the format ``nbmerge merge --grams`` reads).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .base import PREFIX


def attention_heads_output(attn: torch.nn.MultiheadAttention, x: torch.Tensor) -> torch.Tensor:
    """The input of ``attn.out_proj`` for self-attention on ``x`` [B, L, d] (batch_first)."""
    batch, length, width = x.shape
    heads = attn.num_heads
    q, k, v = F.linear(x, attn.in_proj_weight, attn.in_proj_bias).chunk(3, dim=-1)
    q, k, v = (t.reshape(batch, length, heads, width // heads).transpose(1, 2) for t in (q, k, v))
    out = F.scaled_dot_product_attention(q, k, v)
    return out.transpose(1, 2).reshape(batch, length, width)


class GramRecorder:
    """Context manager: while active, every forward through ``encoder`` adds XᵀX to ``self.grams``."""

    def __init__(self, encoder: torch.nn.Module):
        self.encoder = encoder
        self.grams: dict[str, torch.Tensor] = {}
        self.tokens = 0
        self._handles = []

    def _add(self, key: str, inputs: torch.Tensor) -> None:
        flat = inputs.detach().reshape(-1, inputs.shape[-1]).double()
        gram = flat.T @ flat
        self.grams[key] = self.grams[key] + gram if key in self.grams else gram

    def __enter__(self) -> "GramRecorder":
        for i, block in enumerate(self.encoder.transformer.resblocks):
            prefix = f"{PREFIX}transformer.resblocks.{i}."

            def attn_hook(module, args, kwargs, prefix=prefix):
                query = args[0] if args else kwargs["query"]
                self._add(prefix + "attn.in_proj_weight", query)
                self._add(prefix + "attn.out_proj.weight", attention_heads_output(module, query))
                if prefix.endswith("resblocks.0."):
                    self.tokens += query.shape[0] * query.shape[1]

            def linear_hook(module, args, key):
                self._add(key, args[0])

            self._handles.append(block.attn.register_forward_pre_hook(attn_hook, with_kwargs=True))
            for name in ("c_fc", "c_proj"):
                key = prefix + f"mlp.{name}.weight"
                self._handles.append(getattr(block.mlp, name).register_forward_pre_hook(
                    lambda module, args, key=key: linear_hook(module, args, key)))
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
