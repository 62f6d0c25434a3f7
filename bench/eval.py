"""Side-by-side timing of the evaluator's example order on a text suite: length-sorted (what the evaluator does)
against the stored order, same encoder, same weights, best of ``repeats``.

    python -m bench.eval --suite text8
    python -m bench.eval --suite text8 --roofline   # achieved GFLOP/s vs the machine's matmul rate

Measured on 2 CPU cores (text8 validation split, 2,400 texts): 9.95 s sorted vs 11.73 s unsorted, 1.18× faster,
the same accuracy. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

from nbmerge.evaluate.evaluation import Evaluator
from nbmerge.engine.io import load_state_dict
from nbmerge.models.minilm import TextArchitecture
from nbmerge.pools.zoo import eval_splits, load_zoo


@dataclass(frozen=True)
class _StoredOrder(TextArchitecture):
    def eval_order(self, x):
        return None  # the evaluator then keeps the stored order


def bench(suite: str = "text8", split: str = "val", repeats: int = 3, cache=None) -> dict:
    zoo = load_zoo(suite, cache)
    if not isinstance(zoo.arch, TextArchitecture):
        raise SystemExit(f"{suite} is not a text suite")
    splits, heads = eval_splits(zoo.arrays, zoo.tasks), zoo.heads()
    evaluators = {"sorted": Evaluator(zoo.arch, splits, heads),
                  "stored": Evaluator(_StoredOrder(**zoo.arch.to_dict()), splits, heads)}
    state = load_state_dict(zoo.expert_paths[0])
    seconds, accuracy = {k: [] for k in evaluators}, {}
    for evaluator in evaluators.values():
        evaluator.load(state)
        evaluator.evaluate(None, split)  # warm-up
    for _ in range(repeats):  # interleaved, so that machine noise hits both alike
        for name, evaluator in evaluators.items():
            start = time.perf_counter()
            accuracy[name] = evaluator.evaluate(None, split)["mean"]["accuracy"]
            seconds[name].append(time.perf_counter() - start)
    best = {k: min(v) for k, v in seconds.items()}
    return {"suite": suite, "split": split, "seconds": best, "speedup": best["stored"] / best["sorted"],
            "accuracy": accuracy}


def matmul_gflops(m: int = 1024, k: int = 384, n: int = 1536, seconds: float = 1.5) -> float:
    """The machine's measured float32 matrix-multiply rate (GFLOP/s) at the shape of MiniLM's MLP on a batch of
    tokens, with torch's current thread count: the ceiling an evaluation of this model can approach."""
    import torch

    a, b = torch.randn(m, k), torch.randn(k, n)
    for _ in range(3):
        a @ b
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        a @ b
        count += 1
    return 2 * m * k * n * count / (time.perf_counter() - start) / 1e9


def roofline(suite: str = "text8", split: str = "val", cache=None) -> dict:
    """The evaluator's achieved GFLOP/s on a text suite against the machine's measured matmul rate, side by side
    in one run. FLOPs count every linear layer on every token of each batch as run (trimmed to its longest example,
    padding included) plus attention's two score/value products; embeddings and layer norms are left out."""
    import numpy as np
    import torch

    from nbmerge.models.minilm import config_dict

    zoo = load_zoo(suite, cache)
    if not isinstance(zoo.arch, TextArchitecture):
        raise SystemExit(f"{suite} is not a text suite")
    config = config_dict()
    d, ff, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    evaluator = Evaluator(zoo.arch, eval_splits(zoo.arrays, zoo.tasks), zoo.heads())
    evaluator.load(load_state_dict(zoo.base_path))
    flops = 0.0
    for task in zoo.tasks:
        inputs, _ = evaluator._inputs[(task, split)]
        lengths = inputs[:, 1].sum(-1).numpy()
        for i in range(0, len(lengths), evaluator.batch):
            batch = lengths[i:i + evaluator.batch]
            tokens = len(batch) * int(batch.max())
            per_token = 2 * (4 * d * d + 2 * d * ff) + 2 * 2 * int(batch.max()) * d
            flops += layers * tokens * per_token
    evaluator.evaluate(None, split)  # warm-up
    start = time.perf_counter()
    evaluator.evaluate(None, split)
    seconds = time.perf_counter() - start
    peak = matmul_gflops()
    achieved = flops / seconds / 1e9
    examples = sum(len(evaluator._inputs[(t, split)][1]) for t in zoo.tasks)
    return {"suite": suite, "split": split, "threads": torch.get_num_threads(), "examples": examples,
            "seconds": seconds, "examples_per_s": examples / seconds, "evaluator_gflops": achieved,
            "matmul_gflops": peak, "ratio": achieved / peak, "flops_per_example": flops / max(examples, 1),
            "mean_tokens": float(np.mean([evaluator._inputs[(t, split)][0][:, 1].sum(-1).float().mean()
                                          for t in zoo.tasks]))}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="text8")
    parser.add_argument("--split", default="val")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--roofline", action="store_true",
                        help="instead: the evaluator's GFLOP/s against the machine's measured matmul rate")
    args = parser.parse_args(argv)
    if args.roofline:
        print(json.dumps(roofline(args.suite, args.split)))
        return
    print(json.dumps(bench(args.suite, args.split, args.repeats)))


if __name__ == "__main__":
    main()
