"""The published CLIP figures beside ours (nbmerge/pools/published.py): present only for a pool imported from the
TALL-masks checkpoints in a published setting, joined by task name, with their provenance."""

import json
import re

import pytest

from nbmerge.cli import main
from nbmerge.pools.published import beside_ours, files, published_figures, source_line
from nbmerge.tasks.clip import load_suite_manifest

EIGHT = load_suite_manifest("clip-8")["tasks"]


def test_every_published_file_names_its_source():
    found = files()
    assert {p.name for p in found} == {"tsv_vit-b32.json", "tsv_vit-l14.json", "experts_vit-b32.json",
                                       "experts_vit-l14.json"}
    for path in found:
        data = json.loads(path.read_text())
        source = data["source"]
        assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", source["repository"])
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"]) and re.fullmatch(r"[0-9a-f]{64}", source["sha256"])
        assert source["licence"] in ("MIT", "Apache-2.0") and source["path"]


def test_the_published_means_are_the_papers_headlines():
    """TSV-M's means recomputed from the per-task values: 85.9/80.1/77.1 (ViT-B/32), 93.0/89.2/87.7 (ViT-L/14)."""
    for model, expected in (("vit-b32", (85.9, 80.1, 77.1)), ("vit-l14", (93.0, 89.2, 87.7))):
        values = json.loads(next(p for p in files() if p.name == f"tsv_{model}.json").read_text())["values"]
        for size, headline in zip(("8 Tasks", "14 Tasks", "20 Tasks"), expected):
            tsv = values[size]["TSV-M"]
            assert round(100 * sum(tsv.values()) / len(tsv), 1) == headline, (model, size)


@pytest.fixture(scope="module")
def pools(tmp_path_factory):
    pytest.importorskip("transformers")
    from nbmerge.pools.fake import FakeViT, write_fake_data, write_fake_pool

    tmp = tmp_path_factory.mktemp("published")
    data = write_fake_data(tmp / "data", EIGHT, n_per_class=1, image_size=32)
    manifests = {}
    for fmt in ("open_clip", "hf"):  # the same pool name, from the two layouts (each in its own cache)
        checkpoints = write_fake_pool(tmp / fmt, EIGHT, fmt, FakeViT())
        assert main(["pool", "import", "clip-vit-b32-8", "--checkpoints", str(checkpoints), "--data-root", str(data),
                     "--cache", str(tmp / f"cache-{fmt}"), "--eval-examples", "8"]) == 0
        manifests[fmt] = json.loads((tmp / f"cache-{fmt}" / "pools" / "clip-vit-b32-8" / "manifest.json").read_text())
    return manifests


def test_a_pool_of_the_tall_masks_checkpoints_gets_the_published_figures(pools):
    manifest = pools["open_clip"]
    figures = published_figures("clip-vit-b32-8", manifest)
    assert figures is not None and sorted(figures["tasks"]) == sorted(EIGHT)
    assert {"tsv", "tsv_c", "consensus", "task_arithmetic", "average", "base (zero-shot)"} == set(figures["methods"])
    ours = {"tsv": {t: 0.5 for t in EIGHT}, "experts (own task)": {t: 1.0 for t in EIGHT}, "ties": {t: 0.4 for t in EIGHT}}
    rows = beside_ours(figures, ours)
    assert [(r["method"], r["source"]) for r in rows] == [("tsv", "ours"), ("tsv", "published")]
    assert rows[0]["mean"] == 0.5 and rows[0]["normalized"] == 0.5
    assert round(100 * rows[1]["mean"], 1) == 85.9 and round(100 * rows[1]["normalized"], 1) == 92.3
    assert rows[1]["Cars"] == pytest.approx(0.7046387265265515)  # joined by task name, not by position
    assert "task_singular_vectors @ a6c9718" in source_line(figures) and "Apache-2.0" in source_line(figures)


def test_other_checkpoints_or_settings_get_none(pools):
    # the Hugging Face layout is not the TALL-masks checkpoints
    assert published_figures("clip-vit-b32-8", pools["hf"]) is None
    manifest = pools["open_clip"]
    assert published_figures("clip-tinyopenclip-8", manifest) is None          # another model's name
    assert published_figures("clip-vit-b32-8", {**manifest, "tasks": EIGHT[:3]}) is None  # another task list
