"""nbmerge: fast, device-agnostic model-merging solvers and the notebooks that test their papers' claims."""

from .errors import CheckpointError, MethodError, NbmergeError, NumericalError
from .io import load_state_dict, save_state_dict, write_tensors
from .merging import merge, merge_to_file
from .registry import all_methods, get_method
from .walker import Walk, task_vectors

__version__ = "0.1.0"

__all__ = [
    "CheckpointError", "MethodError", "NbmergeError", "NumericalError", "Walk", "all_methods", "get_method",
    "load_state_dict", "merge", "merge_to_file", "save_state_dict", "task_vectors", "write_tensors",
]
