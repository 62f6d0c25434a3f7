"""Tasks: the embedded vision and text tasks, CLIP datasets in their published layouts, zero-shot heads."""
