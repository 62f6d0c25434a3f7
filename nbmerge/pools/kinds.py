"""The kinds of pool imported from real checkpoints, one row each. A pool's name starts with its kind's prefix,
and everything that handles a pool by its name (the store, the importer, the CLI's options and extras, the
parameter rules, the error that lists what a suite can be) reads this table: a new kind is its import module plus
one row here. No torch: the CLI reads it before anything heavy is imported."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class PoolKind:
    prefix: str
    #: the name's pattern, with an example
    pattern: str
    #: the extras an import needs (nbmerge.extras)
    extras: tuple[str, ...]
    #: the import options only this kind takes: the ``nbmerge pool import`` flag's name → the importer's keyword
    options: tuple[tuple[str, str], ...]


POOL_KINDS = (
    PoolKind("clip-", "clip-<model>-<n> (clip-vit-b32-8)", ("clip",), (("format", "fmt"), ("text_model", "text_model"))),
    PoolKind("glue-", "glue-<model>-<n> (glue-gpt2-7)", ("lm",), (("base", "base"), ("max_length", "max_length"))),
    PoolKind("lm-", "lm-<model>-<n> (lm-llama-3)", ("lm",), (("base", "base"), ("max_length", "max_length"))),
)
POOL_PREFIXES = tuple(kind.prefix for kind in POOL_KINDS)


def pool_kind(suite: str) -> Optional[PoolKind]:
    """The kind of pool ``suite`` names, or None for an embedded zoo's name."""
    return next((kind for kind in POOL_KINDS if suite.startswith(kind.prefix)), None)


def is_pool(suite: str) -> bool:
    """A pool imported from real checkpoints (``nbmerge pool import``), not built here."""
    return pool_kind(suite) is not None


def pool_patterns() -> str:
    """What a pool's name can be, for messages: "clip-<model>-<n> (...), glue-... or lm-..."."""
    names = [kind.pattern for kind in POOL_KINDS]
    return ", ".join(names[:-1]) + " or " + names[-1]
