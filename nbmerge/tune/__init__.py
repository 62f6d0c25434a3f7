"""Hyper-parameter search: the strategies and their resumable log, and BMM's outer loop."""
