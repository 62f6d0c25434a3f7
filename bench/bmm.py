"""Timing of BMM's repeated solves (the cost of one λ-search trial): the eigenbasis fast path vs a fresh solve.

``python -m bench.bmm [--layers 1] [--tasks 8] [--device cpu]`` prints one JSON object. The default shape
is ViT-B/32's image tower (width 768, MLP 3072) with random experts; ``layers`` blocks of it, since every block
costs the same (multiply the per-trial times by 12/layers for the whole tower).
"""

from __future__ import annotations

import argparse
import json

import torch

from nbmerge.tune.timing import time_bmm_trials


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bmm", description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=768)
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--float32", action="store_true", help="store and multiply in float32")
    args = parser.parse_args(argv)
    result = time_bmm_trials(args.width, args.layers, args.tasks, args.trials, device=args.device,
                             dtype=torch.float32 if args.float32 else torch.float64)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
