"""Benchmarks and peer checks: scripts run from the repository root (`python -m bench.eval`), not part of the installed package."""
