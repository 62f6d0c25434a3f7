"""Solvers beyond one merge: the batched Pareto fronts and MoG-EM."""
