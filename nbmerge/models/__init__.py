"""Model families behind the zoos and pools, one interface (an architecture record that builds its encoder, turns
stored arrays into inputs, records Grams and counts tokens): the tiny ViT (`vit`), CLIP ViTs (`clip`), MiniLM
(`minilm`), Hugging Face language models (`lm`); `base` holds what they share, `grams` the Gram recorder."""

from __future__ import annotations

from .clip import ClipArchitecture
from .vit import Architecture


def arch_from_dict(d: dict):
    """The architecture a manifest's recipe records (the text zoo's carries ``kind``)."""
    if d.get("kind") == "minilm":
        from .minilm import TextArchitecture

        return TextArchitecture(**d)
    if d.get("kind") == "hf_lm":
        from .lm import LMArchitecture

        return LMArchitecture(**d)
    if d.get("kind") == "clip_vit":
        return ClipArchitecture(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})
    return Architecture(**d)
