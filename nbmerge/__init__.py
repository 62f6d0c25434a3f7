"""nbmerge: fast, device-agnostic model-merging solvers and the notebooks that test their papers' claims.

The public API is imported on first use (PEP 562), so ``import nbmerge`` and ``nbmerge --help`` do not load torch.
"""

from importlib import import_module

__version__ = "0.1.0"

_PUBLIC = {
    "CheckpointError": "errors", "MethodError": "errors", "NbmergeError": "errors", "NumericalError": "errors",
    "load_state_dict": "engine.io", "save_state_dict": "engine.io", "write_tensors": "engine.io",
    "merge": "engine.merging", "merge_to_file": "engine.merging", "merge_to_folder": "engine.merging",
    "all_methods": "methods", "get_method": "methods",
    "WalkOptions": "engine.walker", "task_vectors": "engine.walker",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    if name in _PUBLIC:
        value = getattr(import_module(f".{_PUBLIC[name]}", __name__), name)
        globals()[name] = value  # once imported, a plain attribute
        return value
    raise AttributeError(f"module 'nbmerge' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))
