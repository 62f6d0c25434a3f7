"""Analyses of a zoo's checkpoints (task-vector geometry, interference) cached as sealed JSON beside the trial
cache: computed once per zoo, code and key, and recomputed (never used) when an entry fails its checksum."""

from __future__ import annotations

from ..evaluate import trialcache


def cached(zoo, config, name: str, compute, log=print, **key):
    """An analysis of the zoo's checkpoints (task-vector geometry, interference), computed once per zoo, code and
    ``key`` and kept sealed beside the trial cache (:func:`nbmerge.tune.study.stored`), so a warm run recomputes
    nothing; an entry that fails its checksum or was written by other code is recomputed (and said so), never
    used."""
    from ..codehash import code_fingerprint
    from ..pools.store import cache_root
    from ..tune.study import stored

    root = cache_root(config.cache or None) / "analyses" / f"{zoo.root.name}-{trialcache.zoo_fingerprint(zoo)}"
    return stored(root, f"tour-{name}", {"analysis": name, "code": code_fingerprint(), **key}, compute, log,
                  name={"analysis": name, **key})
