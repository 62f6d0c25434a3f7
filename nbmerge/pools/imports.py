"""Importing a pool of real checkpoints of either family, by its name: ``clip-...`` (``pools.clip``) or ``glue-...``
and ``lm-...`` (``pools.lm``)."""

from __future__ import annotations

from pathlib import Path


def import_pool(suite: str, checkpoints, data_root, **options) -> Path:
    """Import a pool of either family (``pools.clip`` or ``pools.lm``, by its name)."""
    if suite.startswith("clip-"):
        from .clip import import_clip_pool

        return import_clip_pool(suite, checkpoints, data_root, **options)
    from .lm import import_lm_pool

    return import_lm_pool(suite, checkpoints, data_root, **options)


def pool_tasks(suite: str) -> list[str]:
    """The tasks a pool's name implies before it is imported (an error when the name cannot be one)."""
    if suite.startswith("clip-"):
        from .clip import suite_tasks

        return suite_tasks(suite)[1]
    from .lm import parse_name

    parse_name(suite)
    return []
