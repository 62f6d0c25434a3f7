"""Real CLIP checkpoints: safe reading of task-vectors-style torch pickles, Hugging Face ↔ open_clip layouts."""
