"""Analyses of a zoo's checkpoints (task-vector geometry, interference) cached as sealed JSON beside the trial
cache: computed once per zoo, code and key, and recomputed (never used) when an entry fails its checksum."""

from __future__ import annotations

from .. import protocol


def cached(zoo, config, name: str, compute, log=print, **key):
    """An analysis of the zoo's checkpoints (task-vector geometry, interference), computed once per zoo, code and
    ``key`` and kept as sealed JSON beside the trial cache, so a warm run recomputes nothing; an entry that fails
    its checksum or was written by other code is recomputed (and said so), never used."""
    import hashlib
    import json

    from ..codehash import code_fingerprint, seal, unseal
    from ..io import atomic_write_text
    from ..pools.zoo import cache_root

    record_key = {"analysis": name, "code": code_fingerprint(), **key}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    path = (cache_root(config.cache or None) / "analyses" / f"{zoo.root.name}-{protocol.zoo_fingerprint(zoo)}"
            / f"tour-{name}-{digest}.json")
    if path.exists():
        ok, value, why = unseal(path.read_text(errors="replace"), record_key)
        if ok:
            return value
        log(f"cached analysis {path.name}: {why}; recomputed")
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, seal(record_key, value))
    return json.loads(json.dumps(value))  # what a warm run reads back (tuples as lists)
