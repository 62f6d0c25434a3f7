"""The merge engine: the method registry, the walker that applies a method's kernels over a model, merge
entry points and recipes, checkpoint reading and writing (safetensors, Hugging Face folders, LoRA adapters,
classifiers), task-aware outputs, statistics pairing, module names and linear algebra."""
