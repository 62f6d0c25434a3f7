"""Peer check of Localize-and-Stitch against the official code, on the same model, heads and batches.

    python -m bench.peers.localize --ls-repo /path/to/Localize-and-Stitch   # writes reports/peer_localize.{md,json}

``--ls-repo`` is a local checkout of uiuctml/Localize-and-Stitch (MIT; read and run from there, never copied): its
``localize_utils.py`` (``Localizer.train_graft``, ``Stitcher``) runs in a separate process
(``localize_side.py``) with stand-ins for the vision benchmark's imports, handed this check's heads and batches.

Inputs (held out: nothing here is the zoo's): a randomly initialised BERT encoder behind nbmerge's mean pooling
(``--width``, ``--layers``), experts = base + Gaussian noise of relative size ``--noise``, one random
cosine-prototype head per task (``--classes``), ``--examples`` random token sequences per task with random labels,
and each epoch's order fixed in advance (nbmerge's stateless ``epoch_order``) and handed to both sides. nbmerge
side: ``nbmerge.tune.localize.learn_mask`` per task, then the registered ``localize_stitch`` from the mask file.
Compared: each task's learned mask entry by entry, the stitched model tensor by tensor, and the wall time of the
mask learning on each side (CPU, ``--threads``). Run at the official learning rate, bias and l1 strength, at two
initial sparsities (the official 1e-5 keeps 1 entry of so small a model; nbmerge keeps at least one).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

import nbmerge
from nbmerge import merge
from nbmerge.engine.io import atomic_write_text, load_state_dict, save_state_dict
from nbmerge.methods.localize_stitch import Masks
from nbmerge.models.base import Head
from nbmerge.tune.localize import LocalizeSettings, epoch_order, learn_mask

from .regmean_plusplus import TinyBert

SIDE = Path(__file__).parent / "localize_side.py"
SPARSITIES = (1e-2, 1e-5)


def make_inputs(work: Path, args, sparsity: float) -> dict:
    config = {"vocab_size": 200, "hidden_size": args.width, "num_hidden_layers": args.layers,
              "num_attention_heads": 4, "intermediate_size": 4 * args.width, "max_position_embeddings": 64,
              "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
    tasks = [f"t{t}" for t in range(args.tasks)]
    spec = {"bert": config, "tasks": tasks, "examples": args.examples, "length": args.length, "batch": args.batch,
            "epochs": args.epochs, "sparsity": sparsity, "sigmoid_bias": 5.0, "lr": 1e7, "l1": 1.0,
            "seed": args.seed, "threads": args.threads, "classes": args.classes, "noise": args.noise}
    work.mkdir(parents=True, exist_ok=True)
    arch = TinyBert(config)
    base = {k: v.detach().clone() for k, v in arch.build(args.seed).state_dict().items()}
    gen = torch.Generator().manual_seed(args.seed + 1)
    save_state_dict(base, work / "base.safetensors")
    for i, t in enumerate(tasks):
        expert = {k: v + args.noise * v.std().nan_to_num(0.0).clamp_min(1e-3) * torch.randn(v.shape, generator=gen)
                  if v.is_floating_point() else v for k, v in base.items()}
        save_state_dict(expert, work / "experts" / f"{t}.safetensors")
        ids = torch.randint(1, config["vocab_size"], (args.examples, args.length), generator=gen)
        x = torch.stack([ids, torch.ones_like(ids)], dim=1)          # [N, 2, L]: ids, an all-ones mask
        y = torch.randint(0, args.classes, (args.examples,), generator=gen)
        save_state_dict({"ids": x, "labels": y}, work / "inputs" / f"{t}.safetensors")
        weight = torch.randn(args.classes, args.width, generator=gen)
        save_state_dict(Head(weight / weight.norm(dim=1, keepdim=True), 20.0).state_dict(),
                        work / "heads" / f"{t}.safetensors")
        save_state_dict({str(e): torch.from_numpy(epoch_order(args.examples, args.seed, i, e))
                         for e in range(args.epochs)}, work / "orders" / f"{t}.safetensors")
    atomic_write_text(work / "config.json", json.dumps(spec, indent=1))
    return spec


def ours(work: Path, spec: dict) -> tuple[list[dict], dict, dict]:
    arch = TinyBert(spec["bert"])
    base = load_state_dict(work / "base.safetensors")
    experts = [load_state_dict(work / "experts" / f"{t}.safetensors") for t in spec["tasks"]]
    settings = LocalizeSettings(sparsity=spec["sparsity"], sigmoid_bias=spec["sigmoid_bias"], lr=spec["lr"],
                                l1=spec["l1"], epochs=spec["epochs"], shots=spec["examples"], batch=spec["batch"],
                                seed=spec["seed"])
    masks, seconds = [], {}
    for t, task in enumerate(spec["tasks"]):
        data = load_state_dict(work / "inputs" / f"{task}.safetensors")
        head = Head.from_state_dict(load_state_dict(work / "heads" / f"{task}.safetensors"))
        start = time.perf_counter()
        masks.append(learn_mask(arch, head, data["ids"], data["labels"], base, experts[t], settings, t))
        seconds[task] = time.perf_counter() - start
    stacked = Masks(list(spec["tasks"]), {k: torch.stack([m[k] for m in masks]) for k in masks[0]})
    with tempfile.TemporaryDirectory() as folder:
        path = stacked.save(Path(folder) / "masks.safetensors")
        merged = merge("localize_stitch", base, experts, {"masks": str(path), "scale": 1.0})
    return masks, merged, seconds


def run(args) -> dict:
    torch.set_num_threads(args.threads)
    rows = []
    for sparsity in SPARSITIES:
        work = Path(args.work_dir or tempfile.mkdtemp(prefix="nbmerge-peer-localize-")) / f"sparsity-{sparsity:g}"
        spec = make_inputs(work, args, sparsity)
        subprocess.run([sys.executable, str(SIDE), str(work), str(Path(args.ls_repo).resolve())], check=True,
                       env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)), stdout=subprocess.DEVNULL)
        timings = json.loads((work / "official" / "timings.json").read_text())
        masks, merged, seconds = ours(work, spec)
        theirs_merged = load_state_dict(work / "official" / "merged.safetensors")
        for task, mask in zip(spec["tasks"], masks):
            theirs = load_state_dict(work / "official" / f"masks_{task}.safetensors")
            differ = sum(int((mask[k] != theirs[k]).sum()) for k in mask)
            kept = sum(int(theirs[k].sum()) for k in theirs)
            total = sum(theirs[k].numel() for k in theirs)
            rows.append({"sparsity": sparsity, "task": task, "entries": total, "kept_official": kept,
                         "kept_nbmerge": sum(int(mask[k].sum()) for k in mask), "differing": differ,
                         "nbmerge_s": seconds[task], "peer_s": timings["seconds"][task],
                         "speedup": timings["seconds"][task] / seconds[task]})
        diff = max((merged[k].double() - theirs_merged[k].double()).abs().max().item() for k in theirs_merged)
        moved = max((theirs_merged[k].double() - load_state_dict(work / "base.safetensors")[k].double()).abs().max()
                    .item() for k in theirs_merged)
        rows.append({"sparsity": sparsity, "task": "stitched", "max_abs_diff": diff, "largest_move": moved})
        print(f"localize (sparsity {sparsity:g}): masks differ in "
              f"{sum(r.get('differing', 0) for r in rows if r['sparsity'] == sparsity)} entries; stitched max abs "
              f"diff {diff:.2e} (move {moved:.3f})", flush=True)
    commit = subprocess.run(["git", "-C", str(args.ls_repo), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown (not a git checkout)"
    return {"config": {k: v for k, v in spec.items() if k != "sparsity"}, "official_commit": commit,
            "versions": {"nbmerge": nbmerge.__version__, "torch": torch.__version__,
                         "python": platform.python_version(), "machine": platform.machine()},
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "rows": rows}


def write_report(result: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out_dir / "peer_localize.json", json.dumps(result, indent=1))
    c, v = result["config"], result["versions"]
    bert = c["bert"]
    lines = [
        "# Localize-and-Stitch against the official code: same model, heads and batches",
        "",
        f"Generated by `make peer-localize LS_REPO=...` (`python -m bench.peers.localize`) on {result['date']}, "
        f"against uiuctml/Localize-and-Stitch at {result['official_commit']} (its `localize_utils.py`: "
        "`Localizer.train_graft`, `Stitcher`; run from the checkout in its own process, `bench/peers/"
        f"localize_side.py`). A random BERT encoder (width {bert['hidden_size']}, {bert['num_hidden_layers']} layers, "
        f"mean-pooled), {len(c['tasks'])} experts = base + Gaussian noise of relative size {c['noise']}, a random "
        f"cosine-prototype head of {c['classes']} classes per task, {c['examples']} random token sequences of length "
        f"{c['length']} with random labels per task; the official learning rate ({c['lr']:g}), sigmoid bias "
        f"({c['sigmoid_bias']:g}) and l1 strength ({c['l1']:g}), {c['epochs']} epochs of batches of {c['batch']}, "
        f"each epoch's order fixed in advance and the same on both sides. CPU, {c['threads']} threads, torch "
        f"{v['torch']}, nbmerge {v['nbmerge']}, Python {v['python']}, {v['machine']}.",
        "",
        "nbmerge side: `nbmerge.tune.localize.learn_mask` per task, then the registered `localize_stitch` reading the "
        "mask file. Official side: its Localizer (the model's parameters moved to θ₀ + σ(S) ⊙ τ in place, "
        "gradients from `loss.backward()`, the model reset by `p += θ₀ − p`) and Stitcher (1 / overlap count). The "
        "official per-epoch evaluation of the current mask on the training data (a printout) is skipped.",
        "",
        "| initial sparsity | task | entries | kept (official) | kept (nbmerge) | entries that differ | "
        "nbmerge s | official s | speed-up |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        if r["task"] == "stitched":
            continue
        lines.append(f"| {r['sparsity']:g} | {r['task']} | {r['entries']:,} | {r['kept_official']:,} | "
                     f"{r['kept_nbmerge']:,} | {r['differing']} | {r['nbmerge_s']:.2f} | {r['peer_s']:.2f} | "
                     f"{r['speedup']:.2f}× |")
    lines += ["", "| initial sparsity | stitched model: max abs diff | largest entry move from the base |", "|---|---|---|"]
    for r in result["rows"]:
        if r["task"] == "stitched":
            lines.append(f"| {r['sparsity']:g} | {r['max_abs_diff']:.2e} | {r['largest_move']:.3f} |")
    atomic_write_text(out_dir / "peer_localize.md", "\n".join(lines) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ls-repo", required=True, help="a checkout of uiuctml/Localize-and-Stitch")
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=3)
    parser.add_argument("--examples", type=int, default=96)
    parser.add_argument("--length", type=int, default=12)
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--out", default="reports")
    args = parser.parse_args(argv)
    if not (Path(args.ls_repo) / "localize_utils.py").is_file():
        parser.error(f"--ls-repo {args.ls_repo}: no localize_utils.py there (a checkout of "
                     "uiuctml/Localize-and-Stitch?)")
    write_report(run(args), Path(args.out))
    print(f"wrote {Path(args.out) / 'peer_localize.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
