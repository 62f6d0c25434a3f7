"""The mergekit benchmark's plumbing (bench/mergekit.py), without mergekit: the checkpoints it writes, the commands
and YAML it builds, its arithmetic on made-up measurements, and a quick run of the nbmerge side (with mergekit too
when its venv is already there)."""

import json
import math
import os
from pathlib import Path

import pytest
import torch

from bench import mergekit as bm
from nbmerge.engine.io import SafetensorsSource


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("mergekit-bench")
    return bm.make_checkpoints(root, bm.QUICK_LLAMA, shard_bytes=bm.QUICK_SHARD_BYTES)


def test_llama_shapes_count_tinyllama_parameters():
    shapes = bm.llama_shapes(bm.LLAMA)
    assert sum(math.prod(s) for s in shapes.values()) == 1_100_048_384  # TinyLlama-1.1B, untied head
    assert shapes["model.layers.0.self_attn.k_proj.weight"] == (256, 2048)  # 4 KV heads of 64
    assert shapes["lm_head.weight"] == (32000, 2048)


def test_shard_plan_respects_the_size():
    shapes = {"a": (10,), "b": (10,), "c": (30,), "d": (5,)}
    assert bm.shard_plan(shapes, shard_bytes=40) == [["a", "b"], ["c"], ["d"]]  # c (60 bytes) alone
    assert bm.shard_plan(shapes, shard_bytes=1000) == [["a", "b", "c", "d"]]


def test_checkpoints_are_sharded_folders_transformers_loads(checkpoints):
    from transformers import AutoModelForCausalLM

    base = Path(checkpoints["base"])
    index = json.loads((base / "model.safetensors.index.json").read_text())
    shards = sorted(p.name for p in base.glob("model-*.safetensors"))
    assert len(shards) == checkpoints["shards"] > 1
    assert set(index["weight_map"].values()) == set(shards)
    assert json.loads((base / "config.json").read_text())["architectures"] == ["LlamaForCausalLM"]
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.bfloat16)
    state = model.state_dict()
    source = SafetensorsSource(base)
    assert set(state) == set(source.keys())
    assert all(torch.equal(state[k], source.get(k)) for k in source.keys())
    assert sum(t.numel() for t in state.values()) == checkpoints["parameters"]


def test_experts_are_the_base_plus_small_task_vectors(checkpoints):
    base = SafetensorsSource(checkpoints["base"])
    key = "model.layers.0.mlp.up_proj.weight"
    theta0 = base.get(key).float()
    assert base.get(key).dtype == torch.bfloat16
    taus = [SafetensorsSource(e).get(key).float() - theta0 for e in checkpoints["experts"]]
    for tau in taus:
        assert 0.01 < tau.norm() / theta0.norm() < 0.1  # a fine-tuning-sized change
    assert not torch.equal(taus[0], taus[1])
    again = bm.make_checkpoints(Path(checkpoints["base"]).parent, bm.QUICK_LLAMA, shard_bytes=bm.QUICK_SHARD_BYTES)
    assert again["write_s"] == checkpoints["write_s"]  # the same spec is reused, not rewritten


def test_commands_and_yaml_are_the_matched_settings():
    nb = bm.nbmerge_command("task_arithmetic", "/b", ["/e0", "/e1"], "/out")
    assert nb[nb.index("merge"):] == ["merge", "--method", "task_arithmetic", "--base", "/b", "--experts", "/e0",
                                      "/e1", "--out", "/out/", "--device", "cpu", "--param", "scale=0.3", "--quiet"]
    cuda = bm.nbmerge_command("ties", "/b", ["/e0"], "/out", device="cuda")  # the GPU check's merges
    assert cuda[cuda.index("--device") + 1] == "cuda"
    dare = bm.nbmerge_command("dare_ties", "/b", ["/e0"], "/out")
    assert {"merge=ties", "p=0.5", "density=1.0", "scale=1.0"} <= set(dare)
    assert dare[dare.index("--seed") + 1] == "0"
    ties = bm.nbmerge_command("ties", "/b", ["/e0"], "/out")
    assert {"density=0.2", "merge=mean", "scale=1.0"} <= set(ties)

    config = bm.mergekit_config("task_arithmetic", "/b", ["/e0", "/e1"])
    assert config == {"merge_method": "task_arithmetic", "base_model": "/b",
                      "models": [{"model": "/e0", "parameters": {"weight": 1.0}},
                                 {"model": "/e1", "parameters": {"weight": 1.0}}],
                      "parameters": {"lambda": 0.3, "normalize": False}, "dtype": "float32", "out_dtype": "bfloat16"}
    ties_config = bm.mergekit_config("ties", "/b", ["/e0"])
    assert ties_config["models"][0]["parameters"] == {"weight": 1.0, "density": 0.2}
    assert ties_config["parameters"] == {"lambda": 1.0, "normalize": True}
    dare_config = bm.mergekit_config("dare_ties", "/b", ["/e0"])
    assert dare_config["merge_method"] == "dare_ties"
    assert dare_config["models"][0]["parameters"]["density"] == 0.5  # kept, = 1 − nbmerge's p
    assert dare_config["parameters"]["normalize"] is True  # mergekit's default is false (dis-sum)
    command = bm.mergekit_command("/venv/bin/mergekit-yaml", "/c.yml", "/out")
    assert command[:3] == ["/venv/bin/mergekit-yaml", "/c.yml", "/out"]
    assert {"--no-copy-tokenizer", "--quiet"} <= set(command)
    assert command[command.index("--device") + 1] == "cpu"
    assert command[command.index("--random-seed") + 1] == "0"


def test_reported_commands_name_no_local_paths(tmp_path):
    venv = Path.home() / "peers" / "mergekit-0.1.5"
    command = " ".join(bm.nbmerge_command("ties", str(tmp_path / "base"), [str(tmp_path / "e0")], str(tmp_path / "o")))
    text = bm.portable(command, tmp_path, venv)
    assert text.startswith(("nbmerge merge", "python")) and "$WORK/base" in text and str(tmp_path) not in text
    mk = " ".join(bm.mergekit_command(str(venv / "bin" / "mergekit-yaml"), str(tmp_path / "c.yml"), "o"))
    assert bm.portable(mk, tmp_path, venv).startswith("$MERGEKIT_VENV/bin/mergekit-yaml $WORK/c.yml")
    assert bm.portable(str(Path.home() / "x"), tmp_path, None) == "~/x"


def test_child_environment_sets_threads_and_no_stray_settings(monkeypatch):
    monkeypatch.setenv("THP_MEM_ALLOC_ENABLE", "1")
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    env = bm._child_env(None, 1)
    assert env["OMP_NUM_THREADS"] == "1" and env["MKL_NUM_THREADS"] == "1"
    assert "THP_MEM_ALLOC_ENABLE" not in env and "PYTHONPATH" not in env
    assert env["HF_HUB_OFFLINE"] == "1"
    assert bm._child_env("/repo")["PYTHONPATH"] == "/repo"


def _run(tool, wall, peak=2e9, rep=0):
    return {"tool": tool, "repeat": rep, "wall_s": wall, "peak_rss": peak, "peak_anon_sampled": peak / 2,
            "peak_file_sampled": peak / 4, "load": [1.0, 1.0, 1.0]}


def made_up_report():
    return {
        "command": "python -m bench.mergekit", "quick": False, "threads": 1, "repeats": 2, "budget_min": 25,
        "machine": {"date_utc": "2026-01-01", "host": "h", "platform": "p", "cpu_count": 2, "python": "3",
                    "torch": "t", "nbmerge": "0"},
        "load_start": [1.0, 1.0, 1.0], "load_end": [2.0, 1.5, 1.0], "elapsed_min": 20.0,
        "model": {"config": dict(bm.LLAMA), "parameters": 1_100_000_000, "tensors": 201, "shards": 3,
                  "model_bytes": 2_000_000_000, "largest_tensor_parameters": 50_000_000, "experts": 3,
                  "base_std": 0.02, "tv_rank": 16, "tv_low_rank_std": 6e-4, "tv_noise_std": 4e-4, "write_s": 100},
        "bandwidth": {"limit_Bps": 20e9, "numpy_copy_Bps": 20e9, "torch_copy_Bps": 10e9, "buffer_bytes": 1 << 30,
                      "repeats": 5, "torch_threads": 1},
        "startup": {"nbmerge": {"wall_s": 2.0, "peak_rss": 500_000_000},
                    "mergekit": {"wall_s": 6.0, "peak_rss": 400_000_000}},
        "methods": [
            {"method": "task_arithmetic", "commands": {"nbmerge": "nbmerge merge", "mergekit": "mergekit-yaml"},
             "runs": [_run("nbmerge", 10.0, 3e9), _run("mergekit", 30.0), _run("mergekit", 20.0, rep=1),
                      _run("nbmerge", 12.0, 3.4e9, rep=1)]},
            {"method": "ties", "commands": {"nbmerge": "nbmerge merge"}, "skipped_repeats": [1],
             "runs": [_run("nbmerge", 100.0, 9e9), _run("mergekit", 80.0, 5e9)]},
        ],
    }


def test_summary_arithmetic_on_made_up_measurements():
    report = bm.summarise(made_up_report())
    ta, ties = (row["summary"] for row in report["methods"])
    assert ta["nbmerge"]["best_s"] == 10.0 and ta["nbmerge"]["median_s"] == 11.0
    assert ta["mergekit"]["speedup_best"] == pytest.approx(2.0)  # 20 / 10
    assert ta["mergekit"]["speedup_median"] == pytest.approx(25.0 / 11.0)
    moved = 5 * 2e9  # base + 3 experts read, one model written
    assert report["bytes_moved"] == moved
    assert ta["nbmerge"]["bytes_per_s"] == pytest.approx(moved / 10.0)
    assert ta["nbmerge"]["bandwidth_fraction"] == pytest.approx(moved / 10.0 / 20e9)  # 0.05
    assert report["floor_s"] == pytest.approx(0.5)
    assert ta["nbmerge"]["peak_rss"] == 3.4e9 and ta["nbmerge"]["peak_over_model"] == pytest.approx(1.7)
    budget = report["memory_budget"]["budget_bytes"]
    assert budget == 500_000_000 + 2_000_000_000 + bm.FEW_TENSORS * 200_000_000
    targets = {t["target"]: t for t in report["targets"]}
    assert not targets["task_arithmetic: at least 5× mergekit's speed"]["met"]  # 20 / 10
    assert not targets["ties: at least 5× mergekit's speed"]["met"]  # 80 / 100
    floor = targets["task_arithmetic after start-up: within 4× of its floor"]
    assert floor["value"] == pytest.approx((10.0 - 2.0) / 0.5) and not floor["met"]  # no write rate: the copy floor
    assert targets["task_arithmetic: peak RSS below start-up + one model + a few tensors"]["met"]  # 3.4 ≤ 3.5 GB
    assert not targets["ties: peak RSS below start-up + one model + a few tensors"]["met"]
    markdown = bm.render_markdown(report)
    assert "| task_arithmetic | mergekit | 2 | 20.00 | 25.00 | 2.00× / 2.27× |" in markdown
    assert "of the copy limit" in markdown and "5.0%" in markdown
    assert "Not repeated, to end within 25 minutes: ties (repetition 2)" in markdown
    assert "OMP_NUM_THREADS=1 for both tools" in markdown


def test_report_files_are_written(tmp_path):
    bm.write_report(bm.summarise(made_up_report()), tmp_path / "sub" / "mergekit")
    assert json.loads((tmp_path / "sub" / "mergekit.json").read_text())["methods"][0]["method"] == "task_arithmetic"
    assert (tmp_path / "sub" / "mergekit.md").read_text().startswith("# Speed and memory against mergekit")
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["mergekit.json", "mergekit.md"]


def test_measure_reports_the_commands_own_peak(tmp_path):
    # 200 MB allocated by the child; the benchmark process itself holds torch (~0.5 GB+), which a plain fork would
    # have charged to the child's ru_maxrss
    run = bm.measure(["python3", "-c", "b = bytearray(200_000_000); b[::4096] = b'x' * len(b[::4096])"])
    assert 200e6 < run["peak_rss"] < 300e6
    assert run["wall_s"] > 0 and run["peak_anon_sampled"] <= run["peak_rss"] * 1.1
    with pytest.raises(RuntimeError, match="status 3"):
        bm.measure(["python3", "-c", "raise SystemExit(3)"])


def test_the_disk_rate_is_the_faster_of_page_cache_and_direct_writes(tmp_path, monkeypatch):
    """nbmerge writes its output past the page cache where it can, so the floor takes the disk's better rate of
    the two kinds; a file system that refuses O_DIRECT is measured through the page cache alone."""
    write = bm.write_fsync_rate(tmp_path, 3 << 20, block=1 << 20, repeats=2)
    assert write["bytes"] == 3 << 20 and list(tmp_path.iterdir()) == []
    assert write["kind"] in write["by_kind"] and write["seconds"] == min(k["seconds"] for k in write["by_kind"].values())
    assert "page-cache writes" in bm._write_kinds(write)
    real_open = os.open

    def no_direct(path, flags, *args):
        if flags & getattr(os, "O_DIRECT", 0):
            raise OSError(22, "Invalid argument")
        return real_open(path, flags, *args)
    monkeypatch.setattr(os, "open", no_direct)
    write = bm.write_fsync_rate(tmp_path, 1 << 20, block=1 << 20, repeats=1)
    assert write["kind"] == "page_cache" and list(write["by_kind"]) == ["page_cache"]


def test_quick_run_end_to_end(tmp_path):
    """The nbmerge side of a quick run (and mergekit's, when its venv is already installed: never installed here)."""
    venv = Path(bm.default_peer_dir()) / f"mergekit-{bm.MERGEKIT_VERSION}"
    with_mergekit = (venv / ".nbmerge-installed").exists()
    report = bm.run_benchmark(tmp_path / "report" / "mergekit", quick=True, methods=("ties",), repeats=1,
                              threads=1, startup_repeats=0, workdir=tmp_path / "work", with_mergekit=with_mergekit)
    row = report["methods"][0]
    assert row["summary"]["nbmerge"]["runs"] == 1
    assert row["summary"]["nbmerge"]["peak_rss"] > 0
    assert not list((tmp_path / "work").glob("out-*"))  # outputs removed, checkpoints kept (--workdir)
    assert (tmp_path / "work" / "base" / "model.safetensors.index.json").exists()
    markdown = (tmp_path / "report" / "mergekit.md").read_text()
    assert str(tmp_path) not in markdown and str(tmp_path) not in (tmp_path / "report" / "mergekit.json").read_text()
    if with_mergekit:
        agreement = row["agreement"]
        assert agreement["per_tensor_trim_differ_elsewhere"] == 0  # only threshold ties separate the two
        assert row["summary"]["mergekit"]["runs"] == 1
    else:
        assert "agreement" not in row and os.path.exists(tmp_path / "report" / "mergekit.json")


def test_the_gpu_check_script_calls_what_exists():
    """bench/gpu_check.sh (the device call) is valid bash, and every flag it passes is one its modules accept."""
    import re
    import subprocess

    from bench import gpu

    script = Path(__file__).resolve().parents[1] / "bench" / "gpu_check.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    text = script.read_text()
    for module, parser_of in (("bench.gpu", gpu.main), ("bench.mergekit", bm.main)):
        line = next(l for l in text.splitlines() if f"-m {module} " in l and not l.startswith("#"))
        flags = re.findall(r"(--[a-z-]+)", line.split(f"-m {module} ", 1)[1])
        source = Path(parser_of.__code__.co_filename).read_text()
        assert all(f'"{flag}"' in source for flag in flags), (module, flags)
    # the tests it runs exist and its -k selects one
    line = next(l for l in text.splitlines() if "-m pytest" in l)
    target = re.search(r"(tests/\S+\.py) -k (\w+)", line)
    test_file = script.parents[1] / target.group(1)
    assert re.search(rf"def test_\w*{target.group(2)}\w*\(", test_file.read_text())
