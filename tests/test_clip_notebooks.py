"""Issue #8, end to end: every notebook runs on a CLIP pool given only by its parameters (suite, checkpoints,
data_root, device), on tiny fake pools written in both checkpoint layouts with fake datasets in the manifests'
layouts.

Each notebook runs once (smoke parameters): four on the open_clip (task_vectors/TSV pickles) pool, three on the
Hugging Face (FusionBench folders, heads from the base's text tower) pool. Both layouts are imported by the same
code into the same zoo layout (tests/test_clip_pool.py checks they give the same weights and merges), so running
all seven on both would double the time without covering more code.
"""

import json
from pathlib import Path

import pytest

from nbmerge.cli import main
from nbmerge.pools.fake import FakeViT, write_fake_data, write_fake_pool
from nbmerge.report.pipeline import Options, discover, notebook_parameters, run_reports

TASKS = ["MNIST", "EuroSAT", "SVHN"]  # IDX, ImageFolder with its own val split, SVHN .mat
SPLIT = {"open_clip": ["00_tour", "10_ace", "20_bmm_benchmark", "22_bmm_datafree"],
         "hf": ["23_bmm_search", "21_bmm_calibration", "30_pareto"]}


def test_the_split_covers_every_notebook():
    assert sorted(sum(SPLIT.values(), [])) == sorted(p.stem for p in discover(Options().notebooks))


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    pytest.importorskip("transformers")
    tmp = tmp_path_factory.mktemp("clip-notebooks")
    data = write_fake_data(tmp / "data", TASKS, n_per_class=4, image_size=32)
    pools = {}
    for fmt in SPLIT:
        suite = f"clip-tiny{fmt.replace('_', '')}-3"
        checkpoints = write_fake_pool(tmp / fmt, TASKS, fmt, FakeViT())
        # a three-task pool is named by its import (`--tasks`); the notebooks' own import then keeps that list
        assert main(["pool", "import", suite, "--checkpoints", str(checkpoints), "--data-root", str(data),
                     "--tasks", ",".join(TASKS), "--cache", str(tmp / "cache")]) == 0
        pools[fmt] = (suite, checkpoints)
    return tmp, data, pools


@pytest.mark.parametrize("fmt", list(SPLIT))
def test_notebooks_run_on_a_clip_pool_by_parameters(fake, fmt, monkeypatch):
    tmp, data, pools = fake
    suite, checkpoints = pools[fmt]
    manifest = tmp / "cache" / "pools" / suite / "manifest.json"
    stamp = manifest.stat().st_mtime_ns
    overrides = {"suite": suite, "suites": [suite], "tasks": TASKS, "checkpoints": str(checkpoints),
                 "data_root": str(data), "device": "cpu", "cache": str(tmp / "cache")}
    notebooks = discover(Options().notebooks, tuple(SPLIT[fmt]))
    declared = set().union(*(notebook_parameters(p) for p in notebooks))
    overrides = {k: v for k, v in overrides.items() if k in declared}  # `-p` refuses what no notebook declares
    assert {"suite", "checkpoints", "data_root", "device", "cache"} <= set(overrides)
    # HF_HUB_OFFLINE is set by conftest and inherited by the kernels; nothing may reach the network
    monkeypatch.setenv("NBMERGE_CACHE", str(tmp / "unused-cache"))  # the `cache` parameter must be what is used
    out = tmp / f"reports-{fmt}"
    run = run_reports(Options(out=out, smoke=True, only=tuple(SPLIT[fmt]), overrides=overrides,
                              log=lambda *_: None))
    failed = {r["name"]: r.get("error") for r in run["reports"] if r["status"] != "ok"}
    assert run["status"] == "complete", failed
    assert manifest.stat().st_mtime_ns == stamp  # the notebooks found the imported pool unchanged: no re-import
    assert not (tmp / "unused-cache").exists()
    run_dir = out / "runs" / run["id"]
    for name in SPLIT[fmt]:
        page = (run_dir / f"{name}.html").read_text()
        assert suite in page  # every report names the suite its numbers come from
    saved = json.loads((run_dir / "run.json").read_text())
    assert [r["status"] for r in saved["reports"]] == ["ok"] * len(SPLIT[fmt])


def test_the_fake_pools_are_what_the_import_says(fake):
    tmp, _, pools = fake
    for fmt, (suite, _) in pools.items():
        manifest = json.loads((Path(tmp) / "cache" / "pools" / suite / "manifest.json").read_text())
        assert manifest["tasks"] == TASKS and manifest["source"]["format"] == fmt
