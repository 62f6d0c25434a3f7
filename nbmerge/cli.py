"""The ``nbmerge`` command line."""

from __future__ import annotations

import argparse
import errno
import os
import random
import sys
import time
import warnings

from .engine import walk_options
from .errors import NbmergeError
from .params import parse_pairs
from .pools.kinds import pool_patterns


def _size(text: str) -> int:
    units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}  # binary: 2G, 2GB and 2GiB are 2·2³⁰ bytes
    clean = text.strip().upper().rstrip("B")
    clean = clean[:-1] if clean.endswith("I") else clean
    try:
        if clean and clean[-1] in units:
            size = int(float(clean[:-1]) * units[clean[-1]])
        else:
            size = int(clean)
    except (ValueError, OverflowError):  # OverflowError: infG, 1e400
        raise NbmergeError(f"--max-shard-size: expected a size such as 500M or 2G, got {text!r}") from None
    if size <= 0:
        raise NbmergeError(f"--max-shard-size must be positive, got {text!r}")
    return size


def _threads(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number of threads, got {text!r}") from None
    if not 1 <= value <= 4096:
        raise argparse.ArgumentTypeError(f"threads must be between 1 and 4096, got {value}")
    return value


def _seed(text: str) -> int:
    """A seed: an integer in 0 .. 2⁶³ − 1 (what torch's generators take)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"a seed is an integer in 0 .. 2**63 - 1, got {text}")
    return value


def _statistics(method) -> str:
    if method.learned:
        text = f"learned on {method.learned}"
    else:
        text = "data-free" if method.data_free else "needs " + ", ".join(method.needs)
    return text + "".join(f", {stat} optional" for stat in method.optional)


def cmd_methods(args) -> int:
    from .methods import all_methods

    rows = []
    for m in all_methods():
        needs = _statistics(m)
        params = ", ".join(f"{p.name}={p.default}" for p in m.params.values())
        rows.append((m.name, needs, params, m.paper))
    if args.verbose:
        for m in all_methods():
            print(f"{m.name}  ({_statistics(m)})  {m.paper}")
            print(f"    {m.summary}")
            for p in m.params.values():
                print(f"    --param {p.name}={p.default!s:<8} {p.help}")
        return 0
    header = ("method", "statistics", "parameters (defaults)", "paper")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(4)]
    for row in [header, tuple("-" * w for w in widths)] + rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    return 0


def _recipe_from_args(args):
    """The merge the command line describes: a ``--config`` recipe (``--out`` may override its output), or the
    flags."""
    from .engine.recipe import Recipe, load_recipe

    if args.config:
        given = [flag for flag, value in (("--method", args.method), ("--base", args.base), ("--experts", args.experts),
                                          ("--param", args.param), ("--grams", args.grams), ("--fishers", args.fishers))
                 if value]
        if given:
            raise NbmergeError(f"--config holds the whole recipe: leave out {', '.join(given)} (only --out may "
                               "override it)")
        recipe = load_recipe(args.config)
        if args.out:
            recipe.out = args.out
        if not recipe.out:
            raise NbmergeError(f"{args.config}: no output: give `out:` in the recipe or --out")
        return recipe
    missing = [flag for flag, value in (("--method", args.method), ("--base", args.base), ("--experts", args.experts),
                                        ("--out", args.out)) if not value]
    if missing:
        raise NbmergeError(f"merge needs {', '.join(missing)} (or a recipe: --config recipe.yaml)")
    walk = walk_options.from_arguments(args, _module_kinds)
    params = parse_pairs(args.param, "--param")
    return Recipe(args.method, args.base, list(args.experts), [1.0] * len(args.experts), params,
                  args.grams, args.fishers, walk, None, args.seed, args.out, args.max_shard_size)


def _module_kinds(items) -> dict[str, str]:
    """``--module-kind REGEX=KIND`` (repeatable; split at the last ``=``, so a regex may hold one)."""
    kinds = {}
    for item in items or ():
        pattern, equals, kind = item.rpartition("=")
        if not equals or not pattern:
            raise NbmergeError(f"--module-kind expects REGEX=KIND (e.g. 'linear1\\.weight$=mlp_in'), got {item!r}")
        kinds[pattern] = kind.strip()
    return kinds


def _huge_pages() -> None:
    """Let torch's CPU allocator back large tensors with transparent huge pages (``THP_MEM_ALLOC_ENABLE``, read
    when torch first allocates, so only before torch is imported; an explicit setting wins). A merge allocates a
    few new model-sized tensors per pass, and faulting them in 4 KiB pages costs more time than the arithmetic."""
    if "torch" not in sys.modules:
        os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")


def cmd_merge(args) -> int:
    _huge_pages()
    import torch

    from .engine.hf import is_folder_output
    from .engine.merging import merge_to_file, merge_to_folder
    from .engine.recipe import DTYPES
    from .engine.walker import WalkOptions

    recipe = _recipe_from_args(args)
    if args.config:  # the recipe is an input too: never the output, nor inside a folder the output replaces
        from .engine.io import check_not_an_input

        check_not_an_input(recipe.out, [args.config], what="the output")
        real_out, real_config = os.path.realpath(recipe.out), os.path.realpath(args.config)
        if real_config == real_out or real_config.startswith(real_out.rstrip(os.sep) + os.sep):
            raise NbmergeError(f"the output {recipe.out} would overwrite the recipe {args.config}: choose another "
                               "output path")
    from .engine.pairing import check_pairing

    for flag, stats in (("--grams", recipe.grams), ("--fishers", recipe.fishers)):
        for note in check_pairing(recipe.experts, stats, flag):  # refused here when the recorded tasks contradict
            print(note)
    params = dict(recipe.params)
    seed = recipe.seed
    if seed is not None:
        # Every random operation takes its own seed (DARE's masks); --seed sets it where a method has one,
        # and seeds the global RNGs only as a safeguard.
        from .methods import get_method

        if "seed" in get_method(recipe.method).params and "seed" not in params:
            params["seed"] = str(seed)
        torch.manual_seed(seed)
        random.seed(seed)
    options = {"qkv": "as_is", "device": args.device, **{k: v for k, v in recipe.walk.items() if v is not None}}
    walk = WalkOptions(**options)
    start = time.perf_counter()
    options = dict(grams=recipe.grams, fishers=recipe.fishers, walk=walk,
                   weights=None if all(w == 1.0 for w in recipe.weights) else recipe.weights,
                   out_dtype=DTYPES[recipe.dtype] if recipe.dtype else None, progress=False if args.quiet else None)
    if not is_folder_output(recipe.out) and os.path.isdir(recipe.out):
        raise NbmergeError(f"--out {recipe.out} is a folder: give a file name such as "
                           f"{os.path.join(recipe.out, 'merged.safetensors')}, or {os.path.join(recipe.out, '')} "
                           "(with a trailing slash) to write a Hugging Face folder there")
    if is_folder_output(recipe.out):  # `--out DIR/`: a Hugging Face folder
        written = [merge_to_folder(recipe.method, recipe.base, recipe.experts, recipe.out, params,
                                   max_shard_bytes=_size(recipe.max_shard_size or "5G"), **options)]
    else:
        written = merge_to_file(recipe.method, recipe.base, recipe.experts, recipe.out, params,
                                max_shard_bytes=_size(recipe.max_shard_size) if recipe.max_shard_size else None,
                                **options)
    elapsed = time.perf_counter() - start
    print(f"merged {len(recipe.experts)} expert{'s' if len(recipe.experts) != 1 else ''} with {recipe.method} in {elapsed:.2f}s -> "
          + ", ".join(str(p) for p in written))
    return 0


def cmd_zoo(args) -> int:
    import json

    from .pools.build import build_zoo
    from .pools.zoo import info, suite_dir

    if args.zoo_command == "build":
        start = time.perf_counter()
        path = build_zoo(args.suite, cache=args.cache, quiet=args.quiet)
        print(f"zoo {args.suite} ready in {time.perf_counter() - start:.1f}s: {path}")
    elif args.zoo_command == "targets":
        from .pools.build import zoo_targets

        zoo_targets(args.suite, args.cache)
    elif args.zoo_command == "path":
        print(suite_dir(args.suite, args.cache))
    elif args.zoo_command == "info":
        data = info(args.suite, args.cache)
        if args.json:
            print(json.dumps(data, indent=1))
        else:
            print(f"suite {data['suite']}: base {data['mean_base_accuracy']:.3f}, experts "
                  f"{data['mean_expert_accuracy']:.3f}, averaging {data['simple_average_normalized_accuracy']:.3f} "
                  f"normalized, TA {data['task_arithmetic_normalized_accuracy']:.3f} normalized "
                  f"(λ*={data['task_arithmetic_best_scale']})")
            for task in data["tasks"]:
                print(f"  {task['name']:<22} {task['classes']:>3} classes  base {task['base_accuracy']:.3f}  "
                      f"expert {task['expert_accuracy']:.3f}")
            for name, row in data.get("targets", {}).items():
                if "met" in row:
                    print(f"  target {name}: {row['value']:+.3f} (target {row['target']:+.2f}) "
                          f"{'met' if row['met'] else 'NOT met'}")
    return 0


def cmd_pool(args) -> int:
    from .device import resolve_device
    from .pools.imports import import_pool
    from .pools.kinds import POOL_KINDS, pool_kind

    kind = pool_kind(args.suite)
    if kind is None:
        raise NbmergeError(f"{args.suite!r} is not a pool name: pools are named {pool_patterns()}")
    device = resolve_device(args.device)
    start = time.perf_counter()
    options = {"device": device, "eval_examples": args.eval_examples, "cache": args.cache,
               "tasks": args.tasks.split(",") if args.tasks else None}
    own = dict(kind.options)
    for other in POOL_KINDS:  # an option of another kind, given: say whose it is
        for flag, _ in other.options:
            if flag not in own and getattr(args, flag) not in (None, "auto", 0):
                takers = "/".join(k.prefix for k in POOL_KINDS if flag in dict(k.options))
                raise NbmergeError(f"--{flag.replace('_', '-')} is for {takers} pools, not {kind.prefix} pools")
    options.update({keyword: getattr(args, flag) for flag, keyword in own.items()
                    if getattr(args, flag) not in (None, 0)})
    path = import_pool(args.suite, args.checkpoints, args.data_root, **options)
    print(f"pool {args.suite} ready in {time.perf_counter() - start:.1f}s: {path}")
    return 0


def cmd_perplexity(args) -> int:
    import json

    from .device import resolve_device
    from .evaluate.lm_evaluation import perplexity

    result = perplexity(args.model, args.text, args.max_length, args.stride, resolve_device(args.device))
    print(json.dumps(result) if args.json else
          f"perplexity {result['perplexity']:.4g} (NLL {result['nll']:.4f} over {result['tokens']} tokens, "
          f"{result['windows']} windows)")
    return 0


def cmd_lm_eval(args) -> int:
    import json

    from .device import resolve_device
    from .evaluate.lm_evaluation import harness

    result = harness(args.model, args.tasks.split(","), resolve_device(args.device), args.batch_size, args.limit)
    print(json.dumps(result.get("results", result), indent=1, default=str))
    return 0


def cmd_eval(args) -> int:
    import json

    from .device import resolve_device
    from .engine.io import load_state_dict
    from .pools.zoo import load_zoo

    device = resolve_device(args.device)
    zoo = load_zoo(args.suite, args.cache)
    model = _finite_model(load_state_dict(args.model), args.model)
    result = zoo.evaluator(device).evaluate(model, args.split)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for task, row in result["tasks"].items():
            print(f"{task:<12} " + "  ".join(f"{k} {v:.4f}" for k, v in row.items()))
        print("mean         " + "  ".join(f"{k} {v:.4f}" for k, v in result["mean"].items()))
    return 0


def _finite_model(state: dict, name: str) -> dict:
    """The state dict, or a clear error naming the first tensor with NaN or Inf."""
    for key, value in state.items():
        if value.is_floating_point() and not bool(value.isfinite().all()):
            raise NbmergeError(f"{name}: tensor {key!r} contains NaN or Inf; nothing was evaluated")
    return state


def cmd_stats(args) -> int:
    from pathlib import Path

    from .engine.io import load_state_dict, save_state_dict
    from .pools.zoo import collect_grams, load_zoo

    if args.n <= 0:
        raise NbmergeError(f"--n must be positive, got {args.n}")
    if args.seed < 0:
        raise NbmergeError(f"--seed must be >= 0, got {args.seed}")
    if args.sequential == (args.model is not None):
        raise NbmergeError("give --model (RegMean's Grams of one checkpoint) or --sequential (RegMean++'s Grams of "
                           "the suite's experts), not both")
    if args.sequential and not 0.0 <= args.offdiag_scale <= 1.0:
        raise NbmergeError(f"--offdiag-scale must be in [0, 1], got {args.offdiag_scale}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise NbmergeError(f"--out {out} is a file: stats writes one Gram file per task into a folder")
    zoo = load_zoo(args.suite, args.cache)
    available = min(len(zoo.arrays[task]["train_x"]) for task in zoo.tasks)
    if args.n > available:
        raise NbmergeError(f"--n {args.n}: the suite's smallest training split has {available} examples; "
                           f"give at most {available}")
    extra = {}
    if args.sequential:
        from .methods.regmean_plusplus import RECORDED
        from .pools.sequential import sequential_grams

        result = dict(zip(zoo.tasks, sequential_grams(zoo, args.n, seed=args.seed, offdiag_scale=args.offdiag_scale,
                                                      log=lambda m: print(m, file=sys.stderr))))
        extra = {"recorded": RECORDED, "offdiag_scale": repr(float(args.offdiag_scale))}
    else:
        result = collect_grams(zoo, _finite_model(load_state_dict(args.model), args.model), args.n, seed=args.seed)
    bad = [task for task, stats in result.items()
           if not all(bool(g.isfinite().all()) for g in stats["grams"].values())]
    if bad:
        raise NbmergeError(f"the Grams of {', '.join(bad)} are not finite (the model overflows on its inputs); "
                           "nothing was written")
    for task, stats in result.items():
        save_state_dict(stats["grams"], out / f"{task}.safetensors",
                        metadata={"examples": str(stats["examples"]), "tokens": str(stats["tokens"]),
                                  "task": task, **extra})
    print(f"wrote Grams for {len(result)} tasks to {out} (one file per task, in suite order: "
          + " ".join(f"{task}.safetensors" for task in result) + ")")
    return 0


def cmd_adamerging(args) -> int:
    from pathlib import Path

    from .device import resolve_device
    from .engine.io import check_output_file
    from .pools.zoo import load_zoo
    from .tune.adamerging import AdaMergingSettings, learn_on_zoo

    settings = AdaMergingSettings(granularity=args.granularity, steps=args.steps, lr=args.lr, init=args.init,
                                  clamp=not args.no_clamp, batch=args.batch, seed=args.seed)
    out = Path(args.out)
    check_output_file(out)  # before training, not after
    if args.checkpoint and (os.path.isdir(args.checkpoint) or Path(args.checkpoint).resolve() == out.resolve()):
        raise NbmergeError(f"--checkpoint {args.checkpoint} must be a file of its own (not a folder, not --out)")
    device = resolve_device(args.device)
    zoo = load_zoo(args.suite, args.cache)
    start = time.perf_counter()
    every = max(1, settings.steps // 20)

    def progress(step, loss):
        if not args.quiet and (step % every == 0 or step == settings.steps):
            print(f"step {step}/{settings.steps}: entropy {loss:.4f}", flush=True)

    learned = learn_on_zoo(zoo, settings, device=device, checkpoint=args.checkpoint, progress=progress)
    learned.save(out)
    lam = learned.lambdas
    entropy = f"{learned.losses[0]:.4f} → {learned.losses[-1]:.4f}" if learned.losses else "not trained (0 steps)"
    print(f"adamerging on {args.suite}: {lam.shape[0]} tasks × {lam.shape[1]} tensors, λ in [{lam.min():.3f}, "
          f"{lam.max():.3f}] (mean {lam.mean():.3f}), entropy {entropy} in {time.perf_counter() - start:.1f}s -> {out}")
    print(f"merge with: nbmerge merge --method adamerging --param coefficients={out} --base BASE --experts ...")
    return 0


def cmd_localize(args) -> int:
    from pathlib import Path

    from .device import resolve_device
    from .engine.io import check_output_file
    from .pools.zoo import load_zoo
    from .tune.localize import LocalizeSettings, learn_on_zoo

    settings = LocalizeSettings(sparsity=args.sparsity, sigmoid_bias=args.sigmoid_bias, lr=args.lr, l1=args.l1,
                                epochs=args.epochs, shots=args.shots, batch=args.batch, seed=args.seed)
    out = Path(args.out)
    check_output_file(out)  # before training, not after
    device = resolve_device(args.device)
    zoo = load_zoo(args.suite, args.cache)
    start = time.perf_counter()
    masks = learn_on_zoo(zoo, settings, device=device, progress=lambda task: print(f"localizing {task}", flush=True))
    masks.save(out)
    kept = ", ".join(f"{task} {share:.2%}" for task, share in zip(masks.tasks, masks.proportion()))
    print(f"localize on {args.suite}: masks keep {kept} of each task vector, in {time.perf_counter() - start:.1f}s "
          f"-> {out}")
    print(f"merge with: nbmerge merge --method localize_stitch --param masks={out} --base BASE --experts ...")
    return 0


def cmd_bmm_search(args) -> int:
    import json

    from .pools.zoo import load_zoo
    from .tune.bmm import tune_bmm

    anchor_params = parse_pairs(args.anchor_param, "--anchor-param")
    if args.out:
        from pathlib import Path

        from .engine.io import check_output_file

        check_output_file(Path(args.out))  # before searching, not after
    if args.log and os.path.isdir(args.log):  # the log is appended to (and read to resume): it is one file
        raise NbmergeError(f"--log {args.log} is a folder: give a file name such as "
                           f"{os.path.join(args.log, 'search.jsonl')}")
    from .device import resolve_device

    device = resolve_device(args.device)  # before loading anything
    if args.workers < 1:
        raise NbmergeError(f"--workers must be at least 1, got {args.workers}")
    if args.workers > 1:
        from .tune.distributed import import_ray

        import_ray()  # says what to install, before loading anything
    zoo = load_zoo(args.suite, args.cache)
    result = tune_bmm(zoo, args.anchor, anchor_params=anchor_params, grams=args.gram, strategy=args.strategy,
                      budget=args.budget, seed=args.seed, log_path=args.log, depth_bins=args.depth_bins,
                      with_scale=not args.no_scale, gram_examples=args.gram_examples, grid_sizes=args.grid_size,
                      device=device, out=args.out, progress=not (args.quiet or args.json), workers=args.workers,
                      batch=args.batch, ray_address=args.ray_address)
    summary = result.summary()
    if args.json:
        print(json.dumps(summary, indent=1))
        return 0
    timing = summary["timing"]
    print(f"bmm {args.strategy} on {args.suite} ({len(result.search.trials)} trials, "
          f"{summary['replayed_trials']} from the log), anchor {args.anchor}, {args.gram} Grams")
    print("best: " + ", ".join(f"{name} {value:.4g}" for name, value in summary["best_params"].items())
          + f" (trial {summary['best_trial']})")
    print(f"val accuracy {summary['val_accuracy']:.4f} (anchor {summary['anchor_val_accuracy']:.4f}); "
          f"test accuracy {summary['test_accuracy']:.4f} (anchor {summary['anchor_test_accuracy']:.4f})")
    if timing.get("merge_s_median") is not None:
        print(f"per trial: merge {timing['merge_s_median']:.4f}s, evaluation {timing['eval_s_median']:.4f}s, "
              f"optimiser {timing['optimiser_s_median']:.4f}s (medians)")
    if summary["out"]:
        print(f"wrote {summary['out']}")
    return 0


#: the registered methods, listed here so that building the parser imports no method (a test keeps it equal to the
#: registry)
METHODS = ("ace", "adamerging", "average", "bmm", "breadcrumbs", "cart", "consensus", "dare", "della", "emr",
           "fisher", "iso_c", "iso_cts", "karcher", "knots", "localize_stitch", "model_stock", "mog_em", "pcb",
           "regmean", "regmean_plusplus", "slerp", "tall", "task_arithmetic", "ties", "tsv", "tsv_c", "wudi",
           "wudi_closed_form")
CACHE_HELP = "cache folder (default $NBMERGE_CACHE or ~/.cache/nbmerge)"
SUITE_HELP = "a built zoo suite or an imported pool"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nbmerge")
    except PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nbmerge", description="Model merging solvers and reproducible reports.")
    parser.add_argument("--version", action="version", version=f"nbmerge {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("methods", help="list the registered merge methods")
    p.add_argument("-v", "--verbose", action="store_true", help="show every parameter with its meaning")
    p.set_defaults(func=cmd_methods)

    p = sub.add_parser("merge", help="merge safetensors checkpoints")
    p.add_argument("--config", default=None, metavar="RECIPE.yaml",
                   help="a merge recipe (method, base, experts with weights, params, walk, dtype, out): see README")
    p.add_argument("--method", metavar="METHOD",  # checked by the registry: a one-line error naming the valid ones
                   help="one of: " + ", ".join(METHODS) + " (`nbmerge methods -v` explains each)")
    p.add_argument("--base", help="pretrained checkpoint (.safetensors, index.json or folder)")
    p.add_argument("--experts", nargs="+", help="fine-tuned checkpoints, one per task, or LoRA adapter folders "
                                                "(adapter_config.json + adapter_model.safetensors)")
    p.add_argument("--out", help="output .safetensors path, or DIR/ (trailing slash) for a Hugging Face folder "
                                 "from_pretrained loads (with --config: overrides the recipe's)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="method parameter")
    p.add_argument("--grams", nargs="+", help="per-expert input Grams (XᵀX per linear weight key)")
    p.add_argument("--fishers", nargs="+", help="per-expert diagonal Fisher files (same keys as the model)")
    p.add_argument("--seed", type=_seed, default=None, help="seed of every random step (DARE's drop masks)")
    walk_options.add_arguments(p)   # --matrix-rule, --qkv, --fallback, --exclude ... (nbmerge.engine.walk_options)
    p.add_argument("--max-shard-size", default=None,
                   help="e.g. 2G, 500MB, 2GiB (binary units): write shards plus an index above this (DIR/ outputs: "
                        "default 5G)")
    p.add_argument("--quiet", action="store_true", help="no progress bar (shown on a terminal for merges over 2 s)")
    p.add_argument("--threads", type=_threads, default=None, metavar="N",
                   help="compute threads (default: the idle cores; NBMERGE_THREADS or OMP_NUM_THREADS also set it)")
    p.set_defaults(func=cmd_merge)

    p = sub.add_parser("zoo", help="the embedded model zoo")
    zsub = p.add_subparsers(dest="zoo_command", required=True)
    for name, text in (("build", "build or reuse a suite's zoo"), ("path", "print a suite's folder"),
                       ("info", "accuracies and diagnostics of a built suite"),
                       ("targets", "measure a text suite's fitness targets (TSV-M/ISO-CTS/RegMean vs TA) into "
                                   "targets.json")):
        z = zsub.add_parser(name, help=text)
        z.add_argument("suite", help="a suite name: text-micro, text8/14/20, micro, tiny8/14/20 (or an imported "
                                     "clip-... pool for path/info)")
        z.add_argument("--cache", default=None, help=CACHE_HELP)
        if name == "build":
            z.add_argument("--quiet", action="store_true", help="no progress bars")
        if name == "info":
            z.add_argument("--json", action="store_true", help="print the whole manifest summary as JSON")
    p.set_defaults(func=cmd_zoo)

    p = sub.add_parser("pool", help="pools of real checkpoints (CLIP ViTs, GLUE classifiers, causal LMs) in the "
                                    "zoo layout")
    psub = p.add_subparsers(dest="pool_command", required=True)
    z = psub.add_parser("import", help="convert local checkpoints + data into a clip-, glue- or lm-<model>-<n> suite",
                        description="clip-: open_clip checkpoints as task-vectors/TSV distribute them (zeroshot.pt, "
                                    "<Task>Val/finetuned.pt, head_<Task>Val.pt; pickles through a restricted "
                                    "unpickler) or Hugging Face CLIP folders as FusionBench distributes them, with "
                                    "the datasets from a local root (data_manifests/clip/). glue-: Hugging Face "
                                    "sequence classifiers (GPT-2, RoBERTa, Llama-style; base/ plus one folder or "
                                    "LoRA adapter per task) with GLUE from local TSV, parquet or save_to_disk files "
                                    "(data_manifests/glue/). lm-: causal LMs with a text file per task. Writes the "
                                    "suite every notebook loads with suite=<name>. Nothing is downloaded.")
    z.add_argument("suite", help=pool_patterns())
    z.add_argument("--checkpoints", required=True, help="folder of the checkpoints")
    z.add_argument("--data-root", required=True, help="local root of the datasets")
    z.add_argument("--format", default="auto", help="auto | open_clip | hf")
    z.add_argument("--text-model", default=None, help="full CLIP weights, for heads built from class names "
                                                       "when no head files are given")
    z.add_argument("--base", default=None, help="glue-/lm- pools: the base model folder (default CHECKPOINTS/base)")
    z.add_argument("--max-length", type=int, default=0, help="glue-/lm- pools: tokens per example (default 128)")
    z.add_argument("--device", default="auto", help="auto | cpu | cuda[:N] (measuring the imported experts)")
    z.add_argument("--eval-examples", type=int, default=500, help="validation and test examples kept per task")
    z.add_argument("--tasks", default=None, help="comma-separated tasks instead of the <n>-task list (a pool "
                                                 "re-imported without --tasks keeps the list it was imported with)")
    z.add_argument("--cache", default=None, help=CACHE_HELP)
    p.set_defaults(func=cmd_pool)

    p = sub.add_parser("eval", help="evaluate a checkpoint on a zoo suite")
    p.add_argument("--suite", required=True, help=SUITE_HELP)
    p.add_argument("--model", required=True, help="checkpoint to evaluate (.safetensors, index.json or folder)")
    p.add_argument("--split", choices=["val", "test"], default="test", help="which split to evaluate on")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda[:N]")
    p.add_argument("--cache", default=None, help=CACHE_HELP)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("perplexity", help="perplexity of a causal LM folder on a local text file")
    p.add_argument("--model", required=True, help="Hugging Face model folder (e.g. nbmerge merge --out DIR/)")
    p.add_argument("--text", required=True, help="UTF-8 text file")
    p.add_argument("--max-length", type=int, default=512, help="tokens per window")
    p.add_argument("--stride", type=int, default=256, help="tokens between window starts (≤ --max-length)")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda[:N]")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_perplexity)

    p = sub.add_parser("lm-eval", help="lm-evaluation-harness tasks on a causal LM folder (nbmerge[lm-eval])")
    p.add_argument("--model", required=True, help="Hugging Face model folder")
    p.add_argument("--tasks", required=True, help="comma-separated harness tasks (their data cached locally)")
    p.add_argument("--batch-size", type=int, default=8, help="examples per forward")
    p.add_argument("--limit", type=int, default=None, help="examples per task (default all)")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda[:N]")
    p.set_defaults(func=cmd_lm_eval)

    p = sub.add_parser("stats", help="input Grams of every linear weight, per task")
    p.add_argument("--suite", required=True, help=SUITE_HELP)
    p.add_argument("--model", default=None, help="checkpoint whose linear layers' inputs are recorded (RegMean's "
                   "Grams: give each expert and keep its own task's file)")
    p.add_argument("--sequential", action="store_true",
                   help="RegMean++'s Grams instead: the suite's own experts, each block recorded on inputs that "
                        "passed through the merged earlier blocks (one file per expert, for regmean_plusplus)")
    p.add_argument("--offdiag-scale", type=float, default=0.95,
                   help="with --sequential: RegMean's shrinkage the earlier blocks are merged with (merge with the "
                        "same offdiag_scale)")
    p.add_argument("--n", type=int, default=256, help="calibration examples per task (training split)")
    p.add_argument("--out", required=True, help="folder for one Gram file per task")
    p.add_argument("--seed", type=int, default=0, help="seed of the calibration sample")
    p.add_argument("--cache", default=None, help=CACHE_HELP)
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("bmm-search", help="tune BMM's per-group λ and scale on a zoo suite's validation split",
                       description="Bayesian optimisation (or random/grid/shared-λ search) of BMM's block-tied log10 ρ "
                                   "and assembly scale on the validation split; the best merge is evaluated once on "
                                   "test. With --log the search resumes where an interrupted run stopped.")
    p.add_argument("--suite", required=True, help=SUITE_HELP)
    p.add_argument("--anchor", required=True, help="registered method whose merge is the prior mean, e.g. ties")
    p.add_argument("--anchor-param", action="append", default=[], metavar="KEY=VALUE", help="anchor parameter")
    p.add_argument("--gram", choices=["data", "task_vector", "hybrid"], default="data",
                   help="Gram source: the experts' input Grams on training images, or the data-free τᵀτ")
    p.add_argument("--gram-examples", type=int, default=256, help="training images per task for data Grams")
    p.add_argument("--strategy", choices=["bayes", "random", "grid", "shared"], default="bayes",
                   help="bayes: Bayesian optimisation of every group's log10 ρ; random: random search; grid: a grid "
                        "over one shared log10 ρ (and the scale); shared: BO of one log10 ρ shared by every group")
    p.add_argument("--budget", type=int, default=None, help="trials (default 20; grid: its size)")
    p.add_argument("--grid-size", type=int, default=15, help="grid values per dimension (15 × 15 = 225)")
    p.add_argument("--seed", type=_seed, default=0, help="seed of the search")
    p.add_argument("--depth-bins", "--by-depth", dest="depth_bins", type=int, default=0,
                   help="split each module group into N depth bins (the notebooks' depth_bins; --by-depth: its "
                        "former name)")
    p.add_argument("--no-scale", action="store_true", help="fix the assembly scale at 1")
    p.add_argument("--log", default=None, help="JSON-lines trial log; rerun with it to resume")
    p.add_argument("--out", default=None, help="write the tuned merge to this .safetensors file")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda[:N]")
    p.add_argument("--workers", type=int, default=1,
                   help="trials at once, as Ray tasks (one GPU each when there are GPUs); needs nbmerge[distributed]")
    p.add_argument("--batch", type=int, default=None,
                   help="points proposed at a time (bayes/shared: constant liar); default --workers, or the log's")
    p.add_argument("--ray-address", default=None, help="an existing Ray cluster (default: start a local one)")
    p.add_argument("--cache", default=None, help=CACHE_HELP)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=cmd_bmm_search)

    p = sub.add_parser("adamerging", help="learn AdaMerging's coefficients on a zoo suite's unlabeled validation inputs",
                       description="Layer-wise (or task-wise) AdaMerging: a coefficient per task and tensor, learned "
                                   "by Adam on the entropy of each task's predictions over its unlabeled validation "
                                   "inputs (labels and test never read). Writes a coefficient file for `nbmerge merge "
                                   "--method adamerging --param coefficients=FILE`. With --checkpoint an interrupted "
                                   "run resumes where it stopped.")
    p.add_argument("--suite", required=True, help=SUITE_HELP)
    p.add_argument("--out", required=True, help="the coefficient file to write (.safetensors)")
    p.add_argument("--granularity", choices=["layer", "task"], default="layer",
                   help="layer: one coefficient per task and tensor (the paper's best); task: one per task")
    p.add_argument("--steps", type=int, default=500, help="Adam steps (the official code: 500)")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate")
    p.add_argument("--init", type=float, default=0.3, help="every coefficient's starting value (the paper's prior)")
    p.add_argument("--no-clamp", action="store_true",
                   help="do not clamp coefficients to [0, 1] (the official code clamps; FusionBench's CLIP config not)")
    p.add_argument("--batch", type=int, default=16, help="unlabeled inputs of every task per step")
    p.add_argument("--seed", type=_seed, default=0, help="seed of the batches' order")
    p.add_argument("--checkpoint", default=None, help="save λ and Adam's state here as it trains; rerun to resume")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda[:N]")
    p.add_argument("--cache", default=None, help=CACHE_HELP)
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=cmd_adamerging)

    p = sub.add_parser("localize", help="learn Localize-and-Stitch's masks on a few labeled validation examples",
                       description="Per task, a sparse mask of its task vector, learned on k labeled examples per class "
                                   "of the suite's validation split (test never read), as the official Localizer does "
                                   "it. Writes a mask file for `nbmerge merge --method localize_stitch --param "
                                   "masks=FILE` (without one, localize_stitch uses the dataless masks: the largest "
                                   "|τ_t|).")
    p.add_argument("--suite", required=True, help=SUITE_HELP)
    p.add_argument("--out", required=True, help="the mask file to write (.safetensors)")
    p.add_argument("--sparsity", type=float, default=1e-5, help="the initial mask: this share of the largest |τ_t|")
    p.add_argument("--sigmoid-bias", type=float, default=5.0, help="the mask logits' starting magnitude")
    p.add_argument("--lr", type=float, default=1e7, help="the official update's learning rate")
    p.add_argument("--l1", type=float, default=1.0, help="the official update's l1_strength")
    p.add_argument("--epochs", type=int, default=10, help="epochs over the k-shot examples")
    p.add_argument("--shots", type=int, default=64, help="labeled validation examples per class")
    p.add_argument("--batch", type=int, default=128, help="examples per gradient")
    p.add_argument("--seed", type=_seed, default=0, help="seed of the k-shot choice and the batches' order")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda[:N]")
    p.add_argument("--cache", default=None, help=CACHE_HELP)
    p.set_defaults(func=cmd_localize)

    p = sub.add_parser("report", help="run every notebook with papermill and write offline HTML reports + index",
                       description="Execute notebooks/*.ipynb with their layered parameters (notebooks/parameters/"
                                   "default.yaml, then smoke.yaml with --smoke, then -p), render offline HTML into a "
                                   "fresh reports/runs/<id>/ folder and write reports/index.html.")
    p.add_argument("--smoke", action="store_true", help="layer notebooks/parameters/smoke.yaml on top (what CI runs)")
    p.add_argument("--profile", default="default", choices=("default", "paper"),
                   help="default: the parameters that fit an hour on 2 CPU cores; paper: the papers' protocol scale "
                        "(notebooks/parameters/paper.yaml: more suites, seeds, budgets; hours, a GPU advised)")
    p.add_argument("--only", action="append", default=[], metavar="NAME", help="run only this notebook (repeatable)")
    p.add_argument("--publish", action="store_true",
                   help="after a complete run of every notebook at default parameters, copy its pages into "
                        "reports/published/ (the results committed to the repository)")
    p.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
                   help="override a parameter in every notebook that has it (value read as YAML: 3, 0.5, true, [a, b])")
    p.add_argument("--notebooks", default=None, help="notebook folder (default: the project's notebooks/)")
    p.add_argument("--out", default=None, help="reports folder (default: the project's reports/)")
    p.add_argument("--check", action="store_true",
                   help="then open the index and every report in headless Chromium: fail on any network request, "
                        "untypeset math or missing figure (screenshots go to the run folder)")
    p.add_argument("--dry-run", action="store_true",
                   help="check every parameter (names, types, values, suites) and print what each notebook would run "
                        "with; runs and writes nothing")
    p.set_defaults(func=cmd_report)
    return parser


def cmd_report(args) -> int:
    from pathlib import Path

    from .report.pipeline import Options, parse_value, run_reports

    defaults = Options()
    options = Options(notebooks=Path(args.notebooks) if args.notebooks else defaults.notebooks,
                      out=Path(args.out) if args.out else defaults.out, smoke=args.smoke, profile=args.profile, publish=args.publish,
                      only=tuple(args.only),
                      overrides={key: parse_value(value) for key, value in args.parameter})
    if options.out.exists() and not options.out.is_dir():
        raise NbmergeError(f"--out {options.out} is a file: the reports go into a folder (index.html, runs/ ...)")
    if args.dry_run:
        return _report_dry_run(options)
    run = run_reports(options)
    failed = [r for r in run["reports"] if r["status"] != "ok"]
    for row in failed:
        print(f"nbmerge: report {row['name']} failed: {row['error']}", file=sys.stderr)
    bad_pages = {}
    if args.check:
        from .report.browser import check_pages

        run_dir = options.out / "runs" / run["id"]
        pages = [options.out / "index.html"] + [run_dir / r["html"] for r in run["reports"] if r.get("html")]
        bad_pages = {p: problems for p, problems in check_pages(pages, run_dir / "screenshots").items() if problems}
        for page, problems in bad_pages.items():
            print(f"nbmerge: {page}: " + "; ".join(problems), file=sys.stderr)
        if not bad_pages:
            print(f"[report] browser check: {len(pages)} page{'s' if len(pages) != 1 else ''} render"
                  f"{'s' if len(pages) == 1 else ''} offline (screenshots in {run_dir / 'screenshots'})")
    return 1 if failed or bad_pages else 0


def _report_dry_run(options) -> int:
    """``report --dry-run``: the checks a run makes before its first notebook, and nothing else (no zoo build, no
    run folder, no index)."""
    from .report.pipeline import discover, resolve_parameters

    notebooks = discover(options.notebooks, options.only)
    parameters = resolve_parameters(notebooks, options.notebooks / "parameters", options.smoke, options.overrides,
                                    options.profile)
    for notebook in notebooks:
        print(f"{notebook.stem}: {parameters[notebook.stem] or 'its defaults'}")
    print(f"[report] dry run: the parameters of {len(notebooks)} notebook{'s' if len(notebooks) != 1 else ''} "
          "check out; nothing was run or written")
    return 0


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    from .errors import NbmergeWarning

    if issubclass(category, NbmergeWarning):
        print(f"nbmerge: warning: {message}", file=sys.stderr)
    else:
        _show_warning(message, category, filename, lineno, file, line)


_show_warning = warnings.showwarning


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # argparse would print the top-level usage; say what is wrong with this command
        loose = [v for v in getattr(args, "param", None) or [] if "=" not in v]
        if loose:
            print(f"nbmerge {args.command}: error: --param expects KEY=VALUE: write --param {loose[0]}={extra[0]} "
                  f"(got --param {loose[0]} {extra[0]})", file=sys.stderr)
        else:
            print(f"nbmerge {args.command}: error: unrecognized arguments: {' '.join(extra)} (see nbmerge "
                  f"{args.command} --help)", file=sys.stderr)
        return 2
    warnings.showwarning = _one_line_warning
    try:
        try:
            from .extras import command_extras, require

            require(f"nbmerge {args.command}", *command_extras(args.command, getattr(args, "suite", None)))
            if getattr(args, "threads", None) is not None:  # --threads N: the user's count, as NBMERGE_THREADS
                os.environ["NBMERGE_THREADS"] = str(args.threads)
                os.environ.pop("OMP_NUM_THREADS", None)
            if args.command in COMPUTING and not getattr(args, "dry_run", False):
                from .threads import adapt_threads

                adapt_threads(log=lambda line: print(f"nbmerge: note: {line}", file=sys.stderr))
            return args.func(args)
        except ModuleNotFoundError as exc:  # an optional dependency the core install lacks: name the extra
            from .extras import missing_module_error

            clear = missing_module_error(exc)
            if clear is None:
                raise
            raise clear from exc
    except NbmergeError as exc:
        print(f"nbmerge: error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)  # an interrupted report: 128 + the signal's number
    except OSError as exc:  # the machine refused: disk full, a read-only or immutable folder, a vanished path
        print(f"nbmerge: error: {_os_error(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # Every output is written under a temporary name and renamed when complete, so nothing partial remains;
        # a search resumes from its log.
        print("nbmerge: interrupted; nothing partial was written (a search with --log resumes where it stopped)",
              file=sys.stderr)
        return 130
    finally:
        warnings.showwarning = _show_warning



#: the commands that compute with torch: they use as many threads as there are idle cores (nbmerge/threads.py)
COMPUTING = {"merge", "zoo", "pool", "eval", "perplexity", "lm-eval", "stats", "bmm-search", "report"}


def _os_error(exc: OSError) -> str:
    """One line for an error the operating system raised: what it said, and the path it said it about. Outputs are
    written under temporary names and renamed when complete, so a failed write leaves nothing partial behind."""
    reason = exc.strerror or exc.__class__.__name__
    where = " -> ".join(os.fsdecode(f) for f in (exc.filename, exc.filename2) if f is not None)
    hint = {errno.ENOSPC: " (the disk is full)", errno.EDQUOT: " (over the disk quota)",
            errno.EROFS: " (a read-only file system)", errno.EPERM: " (an immutable or protected path?)",
            errno.EACCES: " (no permission)"}.get(exc.errno, "")
    return f"{reason}{hint}{': ' + where if where else ''}; nothing partial was written"

if __name__ == "__main__":
    sys.exit(main())
