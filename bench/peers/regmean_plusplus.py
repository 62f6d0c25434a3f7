"""Peer check of RegMean++ against FusionBench 0.2.33's block-by-block driver, on the same random BERT encoder.

    python -m bench.peers.regmean_plusplus     # writes reports/peer_regmean_plusplus.{md,json}

RegMean++ is not a per-tensor rule: its Grams come from forwards through the merged earlier blocks, so it is
checked on a model, not on random task vectors. Inputs (held out: nothing here is the zoo's): a randomly
initialised BERT encoder (``--width``, ``--layers``), experts = base + Gaussian noise of relative size
``--noise``, per task ``--examples`` random token sequences of one length (no padding, so FusionBench's layers,
called without a mask, see what nbmerge's masked encoder sees). Every ``nn.Linear`` of a BERT layer is called as a
module, so FusionBench's hooks record each one and both sides merge the same weights by RegMean; FusionBench keeps
mean Grams and nbmerge sum Grams, the same merge when every task has as many tokens (they do here).

Both sides: the full RegMean++ merge from in-memory weights and inputs (nbmerge: the recorder and the final
merge; FusionBench: ``run``), wall time on the CPU with ``--threads``; FusionBench in its own venv.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

import nbmerge
from nbmerge.engine.io import atomic_write_text, load_state_dict, save_state_dict

from .fusionbench import FUSIONBENCH_VERSION, compare, ensure_peer_venv

SIDE = Path(__file__).parent / "regmean_plusplus_side.py"


@dataclass(frozen=True)
class TinyBert:
    """A random BERT encoder behind the zoo-architecture interface the RegMean++ recorder uses."""

    config: dict = field(default_factory=dict)
    prefix = ""

    def build(self, seed: int = 0) -> torch.nn.Module:
        from transformers import BertConfig, BertModel

        from nbmerge.models.minilm import SentenceEncoder

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return SentenceEncoder(BertModel(BertConfig(**self.config), add_pooling_layer=False))

    def inputs(self, x) -> torch.Tensor:
        return torch.from_numpy(np.asarray(x)).long()

    def gram_recorder(self, encoder):
        from nbmerge.models.minilm import LinearGramRecorder

        return LinearGramRecorder(encoder, prefix="")


def make_inputs(work: Path, args) -> dict:
    config = {"vocab_size": 200, "hidden_size": args.width, "num_hidden_layers": args.layers,
              "num_attention_heads": 4, "intermediate_size": 4 * args.width, "max_position_embeddings": 64,
              "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
    tasks = [f"t{t}" for t in range(args.tasks)]
    spec = {"bert": config, "tasks": tasks, "examples": args.examples, "batch": args.batch,
            "offdiag_scale": args.offdiag_scale, "threads": args.threads}
    if (work / ".complete").exists():
        return json.loads((work / "config.json").read_text())
    work.mkdir(parents=True, exist_ok=True)
    arch = TinyBert(config)
    base = {k: v.detach().clone() for k, v in arch.build(args.seed).state_dict().items()}
    gen = torch.Generator().manual_seed(args.seed + 1)
    save_state_dict(base, work / "base.safetensors")
    for t in tasks:
        expert = {k: v + args.noise * v.std().nan_to_num(0.0).clamp_min(1e-3) * torch.randn(v.shape, generator=gen)
                  if v.is_floating_point() else v for k, v in base.items()}
        save_state_dict(expert, work / "experts" / f"{t}.safetensors")
        ids = torch.randint(1, config["vocab_size"], (args.examples, args.length), generator=gen)
        save_state_dict({"ids": ids}, work / "inputs" / f"{t}.safetensors")
    atomic_write_text(work / "config.json", json.dumps(spec, indent=1))
    (work / ".complete").write_text("")
    return spec


def ours(work: Path, spec: dict) -> tuple[dict, float, dict]:
    """nbmerge's RegMean++ merge and its wall time; and plain RegMean on the same inputs (the control)."""
    from nbmerge.pools.sequential import record_sequential

    arch = TinyBert(spec["bert"])
    base = load_state_dict(work / "base.safetensors")
    experts = [load_state_dict(work / "experts" / f"{t}.safetensors") for t in spec["tasks"]]
    samples = []
    for t in spec["tasks"]:
        ids = load_state_dict(work / "inputs" / f"{t}.safetensors")["ids"].numpy()
        samples.append(np.stack([ids, np.ones_like(ids)], axis=1))  # [N, 2, L]: ids and an all-ones mask
    start = time.perf_counter()
    recorded = record_sequential(arch, base, experts, samples, spec["offdiag_scale"])
    merged = nbmerge.merge("regmean_plusplus", base, experts, {"offdiag_scale": spec["offdiag_scale"]},
                           grams=[r["grams"] for r in recorded])
    elapsed = time.perf_counter() - start
    plain = nbmerge.merge("regmean", base, experts, {"offdiag_scale": spec["offdiag_scale"]},
                          grams=[_plain_grams(arch, e, s) for e, s in zip(experts, samples)])
    return merged, elapsed, plain


def _plain_grams(arch, state, x) -> dict:
    from nbmerge.models.base import load_encoder_weights

    encoder = arch.build().eval()
    load_encoder_weights(encoder, state, arch.prefix)
    with torch.inference_mode(), arch.gram_recorder(encoder) as recorder:
        encoder(arch.inputs(x))
    return recorder.grams


def run(args) -> dict:
    torch.set_num_threads(args.threads)
    work = Path(args.work_dir or Path(args.peer_dir) / f"work-regmean-pp-{args.width}-{args.layers}-{args.tasks}")
    spec = make_inputs(work, args)
    python = ensure_peer_venv(Path(args.peer_dir))
    for precision, name in (("float32", "regmean_plusplus"), ("float64", "regmean_plusplus_float64")):
        if args.rerun or not (work / "fusionbench" / f"{name}.safetensors").exists():
            subprocess.run([str(python), str(SIDE), str(work), precision], check=True,
                           env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
    version = subprocess.run([str(python), "-c", "import torch, importlib.metadata as m; "
                              "print(torch.__version__, m.version('fusion-bench'))"],
                             capture_output=True, text=True, check=True).stdout.split()
    base = load_state_dict(work / "base.safetensors")
    merged, nb_time, plain = ours(work, spec)
    theirs = load_state_dict(work / "fusionbench" / "regmean_plusplus.safetensors")
    peer_time = json.loads((work / "fusionbench" / "timings.json").read_text())["regmean_plusplus"]
    row = {"job": "regmean_plusplus", "method": "regmean_plusplus", "params": {"offdiag_scale": spec["offdiag_scale"]},
           "peer": "fusionbench", "peer_call": {"method": "RegMeanAlgorithmPlusPlus.run",
                                                "params": {"reduce_non_diagonal_ratio": spec["offdiag_scale"]}},
           "keys": "all", "nbmerge_s": nb_time, "peer_s": peer_time, "speedup": peer_time / nb_time,
           **compare(base, merged, theirs)}
    # which side carries the rounding: both against FusionBench's driver run in float64 throughout
    exact = load_state_dict(work / "fusionbench" / "regmean_plusplus_float64.safetensors")
    row.update(nbmerge_vs_float64=compare(base, merged, exact)["max_rel_diff"],
               peer_vs_float64=compare(base, theirs, exact)["max_rel_diff"])
    # the control: plain RegMean against the same peer output, so the check can tell RegMean++ from RegMean
    control = compare(base, plain, theirs)
    print(f"regmean_plusplus: max rel diff {row['max_rel_diff']:.2e} (plain RegMean vs the peer: "
          f"{control['max_rel_diff']:.2e}; vs float64: nbmerge {row['nbmerge_vs_float64']:.2e}, fusionbench "
          f"{row['peer_vs_float64']:.2e})  nbmerge {nb_time:.2f}s  fusionbench {peer_time:.2f}s "
          f"({row['speedup']:.2f}x)", flush=True)
    return {"config": {k: spec[k] for k in ("bert", "tasks", "examples", "offdiag_scale", "threads")},
            "noise": args.noise, "length": args.length, "seed": args.seed,
            "versions": {"nbmerge": nbmerge.__version__, "torch": torch.__version__, "fusionbench": version,
                         "python": platform.python_version(), "machine": platform.machine()},
            "expected_versions": {"fusionbench": FUSIONBENCH_VERSION},
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "rows": [row], "control_plain_regmean": control}


def write_report(result: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out_dir / "peer_regmean_plusplus.json", json.dumps(result, indent=1))
    c, v, r = result["config"], result["versions"], result["rows"][0]
    bert = c["bert"]
    lines = [
        "# RegMean++ against FusionBench's block-by-block driver: same encoder, same inputs",
        "",
        f"Generated by `make peer-baselines` (`python -m bench.peers.regmean_plusplus`) on {result['date']}. A random "
        f"BERT encoder (width {bert['hidden_size']}, {bert['num_hidden_layers']} layers, seed {result['seed']}), "
        f"{len(c['tasks'])} experts = base + Gaussian noise of relative size {result['noise']}, {c['examples']} random "
        f"token sequences of length {result['length']} per task (no padding), offdiag_scale {c['offdiag_scale']}. "
        f"CPU, {c['threads']} threads: nbmerge {v['nbmerge']} on torch {v['torch']}; FusionBench {v['fusionbench'][1]} "
        f"on torch {v['fusionbench'][0]} in its own venv. Python {v['python']}, {v['machine']}.",
        "",
        "FusionBench side: `RegMeanAlgorithmPlusPlus.run` (its driver: embeddings averaged, each layer's Grams "
        "recorded on the expert's layer fed by the merged predecessors, merged by its `merging_with_regmean_weights`"
        ", then forwarded) with the hooks its CLIP subclass implements written for BERT "
        "(`bench/peers/regmean_plusplus_side.py`). nbmerge side: `nbmerge.pools.sequential.record_sequential`, then "
        "`regmean_plusplus`. Wall time: the whole merge from in-memory weights and inputs on each side.",
        "",
        "The last two columns measure both float32 results against FusionBench's driver run in float64 throughout "
        "(models, activations, Grams, inverse): they say which side carries the rounding. FusionBench keeps float32 "
        "mean Grams and inverts their sum explicitly; nbmerge keeps float64 sum Grams and solves by Cholesky in "
        "float64.",
        "",
        "| method | nbmerge parameters | peer (call) | max abs diff | max rel diff | worst tensor | nbmerge s | peer s "
        "| speed-up | nbmerge vs fp64 | peer vs fp64 |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        f"| regmean_plusplus | offdiag_scale={c['offdiag_scale']} | FusionBench `RegMeanAlgorithmPlusPlus.run` | "
        f"{r['max_abs_diff']:.2e} | {r['max_rel_diff']:.2e} | `{r['worst_key']}` | {r['nbmerge_s']:.2f} | "
        f"{r['peer_s']:.2f} | {r['speedup']:.2f}× | {r['nbmerge_vs_float64']:.2e} | {r['peer_vs_float64']:.2e} |",
        "",
        f"Control: plain RegMean (each expert's own Grams) against the same FusionBench output differs by "
        f"{result['control_plain_regmean']['max_rel_diff']:.2e} (relative), at "
        f"`{result['control_plain_regmean']['worst_key']}`: the agreement above is RegMean++'s, not RegMean's.",
    ]
    atomic_write_text(out_dir / "peer_regmean_plusplus.md", "\n".join(lines) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--examples", type=int, default=64)
    parser.add_argument("--length", type=int, default=16)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--noise", type=float, default=0.05)
    parser.add_argument("--offdiag-scale", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rerun", action="store_true", help="recompute the peer's output")
    parser.add_argument("--peer-dir", default=os.environ.get("NBMERGE_PEER_DIR",
                                                             str(Path.home() / ".cache" / "nbmerge" / "peers")))
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--out", default="reports")
    args = parser.parse_args(argv)
    write_report(run(args), Path(args.out))
    print(f"wrote {Path(args.out) / 'peer_regmean_plusplus.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
