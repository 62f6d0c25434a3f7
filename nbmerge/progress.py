"""Progress bars on stderr: tqdm when it is installed (the notebooks and zoo extras bring it), a silent stand-in
otherwise, so the core install (torch, safetensors, numpy) runs every code path that shows progress."""

from __future__ import annotations


class _Silent:
    """What a bar does when it is off: counts, shows nothing."""

    def __init__(self, total: int = 0, initial: int = 0):
        self.total, self.n = total, initial

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix(self, **_) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, desc: str, quiet: bool = False, initial: int = 0):
    """A tqdm bar (stderr; gone when closed) on a terminal; silent when ``quiet``, when stderr is not a terminal (a
    log file, a pipe, a notebook's stream: a bar there is hundreds of KB of redrawn lines) or tqdm is missing."""
    import sys

    if quiet or not getattr(sys.stderr, "isatty", lambda: False)():
        return _Silent(total, initial)
    try:
        from tqdm import tqdm  # not tqdm.auto: in a notebook it warns about ipywidgets, which reports do not need
    except ImportError:
        return _Silent(total, initial)
    return tqdm(total=total, initial=initial, desc=desc, leave=False)
