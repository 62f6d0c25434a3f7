"""Small random models with real checkpoint layouts, for tests, examples and the peer benchmark."""

from __future__ import annotations

import torch

from .engine.io import StateDict


def openclip_vit_shapes(width: int = 16, layers: int = 2, patch: int = 4, grid: int = 4, output_dim: int = 8,
                        mlp_ratio: int = 4) -> dict[str, tuple[int, ...]]:
    """Parameter shapes of an open_clip ``VisionTransformer`` with the real state-dict names (fused in_proj).

    ``openclip_vit_shapes(768, 12, 32, 7, 512)`` gives ViT-B/32's image tower.
    """
    hidden = mlp_ratio * width
    shapes: dict[str, tuple[int, ...]] = {
        "visual.class_embedding": (width,),
        "visual.positional_embedding": (grid * grid + 1, width),
        "visual.proj": (width, output_dim),
        "visual.conv1.weight": (width, 3, patch, patch),
        "visual.ln_pre.weight": (width,), "visual.ln_pre.bias": (width,),
    }
    for i in range(layers):
        p = f"visual.transformer.resblocks.{i}."
        shapes.update({
            p + "ln_1.weight": (width,), p + "ln_1.bias": (width,),
            p + "attn.in_proj_weight": (3 * width, width), p + "attn.in_proj_bias": (3 * width,),
            p + "attn.out_proj.weight": (width, width), p + "attn.out_proj.bias": (width,),
            p + "ln_2.weight": (width,), p + "ln_2.bias": (width,),
            p + "mlp.c_fc.weight": (hidden, width), p + "mlp.c_fc.bias": (hidden,),
            p + "mlp.c_proj.weight": (width, hidden), p + "mlp.c_proj.bias": (width,),
        })
    shapes.update({"visual.ln_post.weight": (width,), "visual.ln_post.bias": (width,)})
    return shapes


def hf_clip_vision_shapes(width: int = 16, layers: int = 2, patch: int = 4, grid: int = 4,
                          output_dim: int = 8) -> dict[str, tuple[int, ...]]:
    """Shapes of a Hugging Face ``CLIPVisionModelWithProjection`` (separate q/k/v projections)."""
    shapes: dict[str, tuple[int, ...]] = {
        "vision_model.embeddings.class_embedding": (width,),
        "vision_model.embeddings.patch_embedding.weight": (width, 3, patch, patch),
        "vision_model.embeddings.position_embedding.weight": (grid * grid + 1, width),
        "vision_model.pre_layrnorm.weight": (width,), "vision_model.pre_layrnorm.bias": (width,),
    }
    for i in range(layers):
        p = f"vision_model.encoder.layers.{i}."
        for proj in ("k_proj", "v_proj", "q_proj", "out_proj"):
            shapes[p + f"self_attn.{proj}.weight"] = (width, width)
            shapes[p + f"self_attn.{proj}.bias"] = (width,)
        shapes.update({
            p + "layer_norm1.weight": (width,), p + "layer_norm1.bias": (width,),
            p + "mlp.fc1.weight": (4 * width, width), p + "mlp.fc1.bias": (4 * width,),
            p + "mlp.fc2.weight": (width, 4 * width), p + "mlp.fc2.bias": (width,),
            p + "layer_norm2.weight": (width,), p + "layer_norm2.bias": (width,),
        })
    shapes.update({"vision_model.post_layernorm.weight": (width,), "vision_model.post_layernorm.bias": (width,),
                   "visual_projection.weight": (output_dim, width)})
    return shapes


def random_model(shapes: dict[str, tuple[int, ...]], seed: int = 0, scale: float = 0.05,
                 dtype: torch.dtype = torch.float32) -> StateDict:
    generator = torch.Generator().manual_seed(seed)
    return {k: (torch.randn(s, generator=generator, dtype=torch.float64) * scale).to(dtype) for k, s in shapes.items()}


def random_experts(base: StateDict, n: int, seed: int = 1, scale: float = 0.01) -> list[StateDict]:
    """Experts θ_t = θ₀ + τ_t with random low-ish-rank-plus-noise task vectors (so SVD methods have structure)."""
    experts = []
    for t in range(n):
        generator = torch.Generator().manual_seed(seed * 1000 + t)
        expert = {}
        for key, value in base.items():
            if value.dim() == 2:
                rank = max(1, min(value.shape) // 4)
                left = torch.randn(value.shape[0], rank, generator=generator, dtype=torch.float64)
                right = torch.randn(rank, value.shape[1], generator=generator, dtype=torch.float64)
                noise = torch.randn(value.shape, generator=generator, dtype=torch.float64) * 0.1
                delta = (left @ right / rank**0.5 + noise) * scale
            else:
                delta = torch.randn(value.shape, generator=generator, dtype=torch.float64) * scale
            expert[key] = (value.double() + delta).to(value.dtype)
        experts.append(expert)
    return experts
