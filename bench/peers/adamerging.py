"""Peer check of AdaMerging's learned coefficients against FusionBench 0.2.33, on the same encoder, heads and batches.

    python -m bench.peers.adamerging     # writes reports/peer_adamerging.{md,json}

AdaMerging is trained, not a per-tensor rule: it is checked on a model. Inputs (held out: nothing here is the
zoo's): a randomly initialised BERT encoder (``--width``, ``--layers``), mean-pooled and L2-normalised, experts =
base + Gaussian noise of relative size ``--noise``, one random cosine-prototype head per task (``--classes``),
``--examples`` random token sequences per task, and the batch each task trains on at each step fixed in advance
(nbmerge's stateless order) and handed to both sides. FusionBench side: its ``LayerWiseMergedModel`` and
``entropy_loss`` in the loop of ``LayerWiseAdaMergingAlgorithm.test_time_adaptation`` (bench/peers/
adamerging_side.py); nbmerge side: ``nbmerge.tune.adamerging.learn_coefficients``. Both with λ clamped to [0, 1]
(the official code) and not (FusionBench's CLIP configuration). Compared: the learned λ (as the merge uses them)
and every step's loss; wall time of the training loop on each side, CPU, ``--threads``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

import nbmerge
from nbmerge.engine.io import atomic_write_text, load_state_dict, save_state_dict
from nbmerge.models.base import Head
from nbmerge.tune.adamerging import AdaMergingSettings, batch_indices, learn_coefficients

from .fusionbench import FUSIONBENCH_VERSION, ensure_peer_venv
from .regmean_plusplus import TinyBert

SIDE = Path(__file__).parent / "adamerging_side.py"
MODES = ("clamp", "noclamp")


def make_inputs(work: Path, args) -> dict:
    config = {"vocab_size": 200, "hidden_size": args.width, "num_hidden_layers": args.layers,
              "num_attention_heads": 4, "intermediate_size": 4 * args.width, "max_position_embeddings": 64,
              "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
    tasks = [f"t{t}" for t in range(args.tasks)]
    spec = {"bert": config, "tasks": tasks, "examples": args.examples, "length": args.length, "batch": args.batch,
            "steps": args.steps, "lr": args.lr, "init": 0.3, "seed": args.seed, "threads": args.threads,
            "classes": args.classes, "noise": args.noise}
    if (work / ".complete").exists() and json.loads((work / "config.json").read_text()) == spec:
        return spec
    work.mkdir(parents=True, exist_ok=True)
    arch = TinyBert(config)
    base = {k: v.detach().clone() for k, v in arch.build(args.seed).state_dict().items()}
    gen = torch.Generator().manual_seed(args.seed + 1)
    save_state_dict(base, work / "base.safetensors")
    batches = {}
    for i, t in enumerate(tasks):
        expert = {k: v + args.noise * v.std().nan_to_num(0.0).clamp_min(1e-3) * torch.randn(v.shape, generator=gen)
                  if v.is_floating_point() else v for k, v in base.items()}
        save_state_dict(expert, work / "experts" / f"{t}.safetensors")
        ids = torch.randint(1, config["vocab_size"], (args.examples, args.length), generator=gen)
        save_state_dict({"ids": ids}, work / "inputs" / f"{t}.safetensors")
        weight = torch.randn(args.classes, args.width, generator=gen)
        save_state_dict(Head(weight / weight.norm(dim=1, keepdim=True), 20.0).state_dict(),
                        work / "heads" / f"{t}.safetensors")
        for step in range(args.steps):
            batches[f"{t}.{step}"] = torch.from_numpy(batch_indices(args.examples, args.batch, args.seed, i, step))
    save_state_dict(batches, work / "batches.safetensors")
    atomic_write_text(work / "config.json", json.dumps(spec, indent=1))
    (work / ".complete").write_text("")
    return spec


def ours(work: Path, spec: dict, clamp: bool, seed: int) -> tuple[torch.Tensor, list[float], float]:
    arch = TinyBert(spec["bert"])
    base = load_state_dict(work / "base.safetensors")
    experts = [load_state_dict(work / "experts" / f"{t}.safetensors") for t in spec["tasks"]]
    heads = {t: Head.from_state_dict(load_state_dict(work / "heads" / f"{t}.safetensors")) for t in spec["tasks"]}
    inputs = {}
    for t in spec["tasks"]:
        ids = load_state_dict(work / "inputs" / f"{t}.safetensors")["ids"].numpy()
        inputs[t] = arch.inputs(np.stack([ids, np.ones_like(ids)], axis=1))  # [N, 2, L]: ids, an all-ones mask
    settings = AdaMergingSettings(steps=spec["steps"], lr=spec["lr"], init=spec["init"], clamp=clamp,
                                  batch=spec["batch"], seed=seed)
    warm = AdaMergingSettings(steps=1, lr=spec["lr"], init=spec["init"], clamp=clamp, batch=spec["batch"], seed=seed)
    learn_coefficients(arch, heads, inputs, base, experts, warm, log=lambda *_: None)  # one step, untimed (as the peer)
    start = time.perf_counter()
    learned = learn_coefficients(arch, heads, inputs, base, experts, settings, log=lambda *_: None)
    return learned.lambdas, learned.losses, time.perf_counter() - start


def run(args) -> dict:
    torch.set_num_threads(args.threads)
    work = Path(args.work_dir or Path(args.peer_dir) / f"work-adamerging-{args.width}-{args.layers}-{args.tasks}")
    spec = make_inputs(work, args)
    python = ensure_peer_venv(Path(args.peer_dir))
    version = subprocess.run([str(python), "-c", "import torch, importlib.metadata as m; "
                              "print(torch.__version__, m.version('fusion-bench'))"],
                             capture_output=True, text=True, check=True).stdout.split()
    rows = []
    for mode in MODES:
        if args.rerun or not (work / "fusionbench" / f"adamerging_{mode}.safetensors").exists():
            subprocess.run([str(python), str(SIDE), str(work), mode], check=True,
                           env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
        theirs = load_state_dict(work / "fusionbench" / f"adamerging_{mode}.safetensors")
        peer_s = json.loads((work / "fusionbench" / f"timings_{mode}.json").read_text())["seconds"]
        lambdas, losses, nb_s = ours(work, spec, mode == "clamp", spec["seed"])
        control, _, _ = ours(work, spec, mode == "clamp", spec["seed"] + 1)   # other batches: what a mismatch is
        moved = (theirs["lambdas"].double() - spec["init"]).abs().max().item()
        diff = (lambdas.double() - theirs["lambdas"].double()).abs().max().item()
        loss_diff = max(abs(a - b) / abs(b) for a, b in zip(losses, theirs["losses"].tolist()))
        row = {"mode": mode, "clamp": mode == "clamp", "lambda_shape": list(lambdas.shape),
               "max_abs_diff": diff, "lambda_moved": moved, "diff_over_movement": diff / moved if moved else None,
               "max_rel_loss_diff": loss_diff, "first_loss": losses[0], "last_loss": losses[-1],
               "control_max_abs_diff": (control.double() - theirs["lambdas"].double()).abs().max().item(),
               "nbmerge_s": nb_s, "peer_s": peer_s, "speedup": peer_s / nb_s}
        rows.append(row)
        print(f"adamerging ({mode}): λ max abs diff {diff:.2e} (λ moved up to {moved:.3f}; other batches: "
              f"{row['control_max_abs_diff']:.2e}), losses within {loss_diff:.1e}; nbmerge {nb_s:.2f}s, "
              f"fusionbench {peer_s:.2f}s ({row['speedup']:.2f}x)", flush=True)
    return {"config": spec, "versions": {"nbmerge": nbmerge.__version__, "torch": torch.__version__,
                                         "fusionbench": version, "python": platform.python_version(),
                                         "machine": platform.machine()},
            "expected_versions": {"fusionbench": FUSIONBENCH_VERSION},
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "rows": rows}


def write_report(result: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out_dir / "peer_adamerging.json", json.dumps(result, indent=1))
    c, v = result["config"], result["versions"]
    bert = c["bert"]
    lines = [
        "# AdaMerging against FusionBench: same encoder, heads and batches",
        "",
        f"Generated by `make peer-baselines` (`python -m bench.peers.adamerging`) on {result['date']}. A random BERT "
        f"encoder (width {bert['hidden_size']}, {bert['num_hidden_layers']} layers, mean-pooled, L2-normalised), "
        f"{len(c['tasks'])} experts = base + Gaussian noise of relative size {c['noise']}, a random cosine-prototype "
        f"head of {c['classes']} classes per task, {c['examples']} random token sequences of length {c['length']} per "
        f"task; layer-wise AdaMerging from λ = {c['init']}, {c['steps']} Adam steps at lr {c['lr']}, {c['batch']} "
        f"inputs of every task per step, the batches fixed in advance and the same on both sides. CPU, "
        f"{c['threads']} threads: nbmerge {v['nbmerge']} on torch {v['torch']}; FusionBench {v['fusionbench'][1]} on "
        f"torch {v['fusionbench'][0]} in its own venv. Python {v['python']}, {v['machine']}.",
        "",
        "FusionBench side: its `LayerWiseMergedModel` (one coefficient per task and parameter tensor) and "
        "`entropy_loss` in the loop of `LayerWiseAdaMergingAlgorithm.test_time_adaptation` "
        "(`bench/peers/adamerging_side.py`). nbmerge side: `nbmerge.tune.adamerging.learn_coefficients`. "
        "`clamp`: λ clamped to [0, 1] where used (the official code); `noclamp`: FusionBench's CLIP configuration. "
        "FusionBench's entropy is −Σ p·log(p + 1e-8); nbmerge's is the official code's −Σ p·log_softmax, so "
        "the losses differ in the last digits.",
        "",
        "| mode | λ (tasks × tensors) | max abs diff of λ | largest move of λ | diff / move | max rel diff of a "
        "step's loss | entropy first → last | control: other batches | nbmerge s | peer s | speed-up |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        lines.append(f"| {r['mode']} | {r['lambda_shape'][0]} × {r['lambda_shape'][1]} | {r['max_abs_diff']:.2e} | "
                     f"{r['lambda_moved']:.3f} | {r['diff_over_movement']:.1e} | {r['max_rel_loss_diff']:.1e} | "
                     f"{r['first_loss']:.4f} → {r['last_loss']:.4f} | {r['control_max_abs_diff']:.2e} | "
                     f"{r['nbmerge_s']:.2f} | {r['peer_s']:.2f} | {r['speedup']:.2f}× |")
    lines += ["", "Control: nbmerge trained on other batches (seed + 1) against the same FusionBench run: the size "
                  "of a difference that a mismatch in data, order or update would leave."]
    atomic_write_text(out_dir / "peer_adamerging.md", "\n".join(lines) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=3)
    parser.add_argument("--examples", type=int, default=48)
    parser.add_argument("--length", type=int, default=12)
    parser.add_argument("--classes", type=int, default=5)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rerun", action="store_true", help="recompute the peer's output")
    parser.add_argument("--peer-dir", default=os.environ.get("NBMERGE_PEER_DIR",
                                                             str(Path.home() / ".cache" / "nbmerge" / "peers")))
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--out", default="reports")
    args = parser.parse_args(argv)
    write_report(run(args), Path(args.out))
    print(f"wrote {Path(args.out) / 'peer_adamerging.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
