"""Errors nbmerge raises on bad input. The CLI turns each into a one-line message and exit code 2."""


class NbmergeError(ValueError):
    """Base class: a user-facing error whose message says what is wrong and where."""


class CheckpointError(NbmergeError):
    """A checkpoint file is missing, corrupt, truncated, or does not match the others."""


class MethodError(NbmergeError):
    """An unknown method or parameter, or a parameter value out of range."""


class NumericalError(NbmergeError):
    """NaN/Inf in an input, or a linear system that cannot be solved."""
