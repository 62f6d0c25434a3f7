"""Model families behind the zoos and pools. Each implements one interface (:class:`base.ModelFamily`: an
architecture record that builds its encoder, turns stored arrays into inputs, records Grams and counts tokens):
the tiny ViT (`vit`), CLIP ViTs (`clip`), MiniLM (`minilm`), Hugging Face language models (`lm`); `base` holds
what they share, `grams` the Gram recorder. :data:`FAMILIES` is the one table of them."""

from __future__ import annotations

from ..errors import NbmergeError
from .base import ModelFamily
from .clip import ClipArchitecture
from .lm import LMArchitecture
from .minilm import TextArchitecture
from .vit import TinyViT

#: every model family by the ``kind`` its records carry: a new family is its module plus one row here
FAMILIES: dict[str, type] = {"tiny_vit": TinyViT, "clip_vit": ClipArchitecture, "minilm": TextArchitecture,
                             "hf_lm": LMArchitecture}


def arch_from_dict(d: dict) -> ModelFamily:
    """The architecture a manifest's recipe records, by its ``kind`` (a record without one is a tiny ViT's: its
    records predate kinds). Lists in the record (JSON has no tuples) become tuples."""
    kind = d.get("kind", TinyViT.kind)
    if kind not in FAMILIES:
        raise NbmergeError(f"unknown model family {kind!r} in a suite's record; known: {', '.join(FAMILIES)}")
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in d.items() if k != "kind" or kind != TinyViT.kind}
    return FAMILIES[kind](**fields)
