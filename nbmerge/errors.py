"""Errors nbmerge raises on bad input. The CLI turns each into a one-line message and exit code 2."""


class NbmergeError(ValueError):
    """Base class: a user-facing error whose message says what is wrong and where."""


class CheckpointError(NbmergeError):
    """A checkpoint file is missing, corrupt, truncated, or does not match the others."""


class MethodError(NbmergeError):
    """An unknown method or parameter, or a parameter value out of range."""


class NumericalError(NbmergeError):
    """NaN/Inf in an input, or a linear system that cannot be solved."""


class NbmergeWarning(UserWarning):
    """Something a user should know that does not stop the job (the CLI prints it as one line)."""


class ParameterError(NbmergeError):
    """A notebook parameter of `nbmerge report` with an unknown or out-of-range value (checked before any run)."""


class RunInterrupted(NbmergeError):
    """`nbmerge report` stopped by SIGINT or SIGTERM; the run folder is marked ``interrupted``."""

    def __init__(self, message: str, signal_name: str = "SIGINT"):
        super().__init__(message)
        self.signal_name = signal_name

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process ended by a signal: 128 + its number (130 for SIGINT)."""
        import signal

        return 128 + int(getattr(signal, self.signal_name, signal.SIGINT))


class CacheError(NbmergeError):
    """A file the zoo's cache derives (a suite's manifest.json, a store's journal.json, targets.json) is corrupt or
    unreadable; the message names the file and the command that rebuilds it."""


def did_you_mean(name: str, choices) -> str:
    """`` (did you mean 'ties'?)`` for a near-miss ``name`` among ``choices`` (case, a letter missing or extra, a
    dropped separator), or ``""``."""
    import difflib

    choices = [str(c) for c in choices]
    folded = {c.lower().replace("-", "_"): c for c in choices}
    key = str(name).lower().replace("-", "_")
    if key in folded and folded[key] != name:
        return f" (did you mean {folded[key]!r}?)"
    close = difflib.get_close_matches(key, list(folded), n=1, cutoff=0.6)
    prefixed = [c for k, c in folded.items() if len(key) >= 3 and (k.startswith(key) or key.startswith(k))]
    found = close[0] if close else None
    if found is not None:
        return f" (did you mean {folded[found]!r}?)"
    return f" (did you mean {prefixed[0]!r}?)" if len(prefixed) == 1 else ""
