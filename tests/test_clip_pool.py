"""nbmerge.pools.clip / arch: tiny fake CLIP pools in the task_vectors/TSV and FusionBench layouts, imported as zoo
suites that the zoo's evaluator, merge and Gram code run on."""

import json
import types

import numpy as np
import pytest
import torch
from PIL import Image

import nbmerge
from nbmerge.errors import CheckpointError, NbmergeError
from nbmerge.engine.io import load_state_dict
from nbmerge.models import arch_from_dict
from nbmerge.models.clip import ClipArchitecture
from nbmerge.pools.clip import eval_transform, import_clip_pool
from nbmerge.pools.fake import (
    HF_BASE,
    FakeViT,
    fake_weights,
    save_hf_clip_with_text,
    save_hf_vision,
    save_open_clip_encoder,
    write_hf_pool,
    write_open_clip_pool,
)
from nbmerge.pools.store import Store
from nbmerge.pools.zoo import Zoo, collect_grams, load_zoo
from nbmerge.tasks.clip import load_task_manifest, write_fake_dataset

TASKS = ["MNIST", "EuroSAT", "SVHN"]  # IDX, ImageFolder (with its own val split), SVHN .mat: three data layouts
DATA_FORMATS = {"MNIST": "idx", "EuroSAT": "imagefolder", "SVHN": "svhn_mat"}
GRID = (0.3, 1.0)
# What build_zoo writes into a manifest (nbmerge/pools/build.py); a pool adds "source".
BUILD_ZOO_KEYS = ["suite", "tasks", "recipe", "recipe_hash", "store", "checksums", "classes", "timings", "environment",
                  "base_accuracy", "expert_accuracy", "simple_average_accuracy",
                  "simple_average_normalized_accuracy", "task_arithmetic", "task_arithmetic_normalized_accuracy",
                  "diagnostics", "eval_throughput_images_per_s"]


def _quiet(*_):
    pass


VIT = FakeViT(heads=4)  # explicit heads=: the import is told, as it must be for a tower that is not width // 64


def _vit(seed: int):
    return VIT.build(seed)


def _weights():
    """A base tower and one expert per task (base + a small random task vector), ``visual.*`` float32."""
    return fake_weights(TASKS, VIT)


def _hf_save(state, folder, with_projection):
    pytest.importorskip("transformers")
    save_hf_vision(state, folder, with_projection, VIT)


def _tiny_text_clip(path):
    """An open_clip CLIP state dict with a one-layer text tower embedding into the image tower's 32 dimensions."""
    from open_clip.model import CLIP

    config = {"embed_dim": 32, "vision_cfg": {"image_size": 28, "layers": 1, "width": 64, "patch_size": 7},
              "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1}}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(5)
        clip = CLIP(config["embed_dim"], config["vision_cfg"], config["text_cfg"], quick_gelu=True)
    torch.save(clip.state_dict(), path)
    return config


@pytest.fixture(scope="module")
def pools(tmp_path_factory):
    """Both layouts written from the same weights, one data root, both imported into one cache."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # restored below: later files compare bit-exact results computed under one count
    tmp = tmp_path_factory.mktemp("clip-pool")
    data = tmp / "data"
    for task in TASKS:
        write_fake_dataset(data, task, n_per_class=3, image_size=36, fmt=DATA_FORMATS[task])
    base, experts, heads = _weights()
    tsv = write_open_clip_pool(tmp / "tsv" / "ViT-tiny", base, experts, heads, VIT)
    hf = write_hf_pool(tmp / "fusionbench", base, experts, VIT)
    text_config = _tiny_text_clip(tmp / "text.pt")
    cache = tmp / "cache"
    options = dict(tasks=TASKS, heads=4, eval_examples=20, train_examples=16, ta_grid=GRID, cache=cache, log=_quiet)
    roots = {"open_clip": import_clip_pool("clip-tiny-3", tsv, data, **options),
             "hf": import_clip_pool("clip-tinyhf-3", hf, data, text_model=tmp / "text.pt", text_config=text_config,
                                    **options)}
    yield types.SimpleNamespace(tmp=tmp, data=data, tsv=tsv, hf=hf, cache=cache, roots=roots, base=base,
                                experts=experts, heads=heads, text_config=text_config, options=options)
    torch.set_num_threads(threads)


def _zoo(root):
    manifest = json.loads((root / "manifest.json").read_text())
    store = Store(root / "store", log=_quiet)
    return Zoo(root, manifest, {t: store.load_arrays(f"data/{t}.npz") for t in manifest["tasks"]})


# ----------------------------------------------------------------------------------------------------------------


def test_arch_round_trips_and_reads_open_clip_configs():
    state = {"visual." + k: v for k, v in _vit(0).state_dict().items()}
    arch = ClipArchitecture.from_state_dict(state, heads=4)
    assert (arch.image_size, arch.patch_size, arch.width, arch.layers, arch.output_dim) == (28, 7, 64, 2, 32)
    assert arch.mlp_ratio == 4.0 and arch.act == "quick_gelu" and arch.tokens(np.zeros((3, 1))) == 3 * 17
    assert arch_from_dict(json.loads(json.dumps(arch.to_dict()))) == arch
    assert ClipArchitecture.from_state_dict(state).heads == 1  # width // 64
    encoder = arch.build()
    encoder.load_state_dict({k[len("visual."):]: v for k, v in state.items()})
    b32 = ClipArchitecture.from_model_name("ViT-B-32")
    assert (b32.image_size, b32.patch_size, b32.width, b32.layers, b32.heads, b32.output_dim) == (224, 32, 768, 12,
                                                                                                  12, 512)
    assert ClipArchitecture.from_model_name("ViT-L-14").heads == 16
    no_proj = ClipArchitecture.from_state_dict({k: v for k, v in state.items() if k != "visual.proj"}, heads=4)
    assert no_proj.output_dim == 0 and no_proj.build().proj is None and no_proj.embed_dim == 64
    with pytest.raises(NbmergeError, match="act 'relu'"):
        ClipArchitecture(act="relu")


def test_stored_images_match_open_clip_eval_transform():
    import open_clip

    rng = np.random.default_rng(0)
    image = Image.fromarray(rng.integers(0, 256, (45, 60, 3), dtype=np.uint8))
    stored = eval_transform(28)(image)
    assert stored.dtype == np.uint8 and stored.shape == (3, 28, 28)
    expected = open_clip.image_transform(28, is_train=False)(image)
    actual = ClipArchitecture(image_size=28, patch_size=7, width=64, heads=4).inputs(stored[None])[0]
    assert torch.allclose(actual, expected, atol=1e-5)


@pytest.mark.parametrize("fmt", ["open_clip", "hf"])
def test_imported_pool_works_as_a_zoo(pools, fmt):
    root = pools.roots[fmt]
    zoo = _zoo(root)
    assert sorted(zoo.manifest) == sorted(BUILD_ZOO_KEYS + ["source"])
    assert zoo.tasks == TASKS and zoo.manifest["source"]["format"] == fmt
    assert set(zoo.manifest["source"]["sha256"]) and zoo.manifest["task_arithmetic"]["grid"] == list(GRID)
    recipe = zoo.recipe
    assert recipe.head_shots == 0 and recipe.eval_examples == 20
    assert isinstance(zoo.arch, ClipArchitecture) and zoo.arch.heads == 4
    assert load_zoo(root.name, pools.cache).manifest == zoo.manifest  # the lead's pool wiring of load_zoo

    base = load_state_dict(zoo.base_path)
    assert base.keys() == pools.base.keys() and all(torch.equal(base[k], v) for k, v in pools.base.items())
    for task in TASKS:
        expert = load_state_dict(zoo.expert_path(task))
        assert all(torch.equal(expert[k], v) for k, v in pools.experts[task].items() if k != "visual.proj")
        assert torch.equal(expert["visual.proj"], pools.base["visual.proj"] if fmt == "hf"
                           else pools.experts[task]["visual.proj"])
        arrays = zoo.arrays[task]
        assert arrays["train_x"].shape == (16, 3, 28, 28) and arrays["train_x"].dtype == np.uint8
        # 30 images per source split; MNIST's and SVHN's val is the 10% TSV carves out of train
        assert len(arrays["test_x"]) == 20 and len(arrays["val_x"]) == (20 if task == "EuroSAT" else 3)
        assert list(arrays["class_names"]) == zoo.manifest["classes"][task]
    heads = zoo.heads()
    for task in TASKS:
        assert torch.allclose(heads[task].weight.norm(dim=1), torch.ones(len(heads[task].weight)), atol=1e-5)
    assert not torch.allclose(heads["MNIST"].weight[0], heads["MNIST"].weight[1])
    if fmt == "open_clip":  # task_vectors folds the scale into the rows: unfolded again
        assert all(torch.allclose(heads[t].weight, pools.heads[t], atol=1e-6) for t in TASKS)
        assert all(abs(heads[t].logit_scale - 100.0) < 1e-3 for t in TASKS)

    result = zoo.evaluator().evaluate(load_state_dict(zoo.expert_path("MNIST")), "test")
    assert 0.0 <= result["mean"]["accuracy"] <= 1.0 and set(result["tasks"]) == set(TASKS)
    merged = nbmerge.merge("task_arithmetic", zoo.base_path, zoo.expert_paths, {"scale": 0.3})
    assert zoo.evaluator().evaluate(merged, "val")["mean"]["accuracy"] >= 0.0
    grams = collect_grams(zoo, base, 4, tasks=["MNIST"])["MNIST"]
    assert grams["tokens"] == zoo.arch.tokens(np.zeros(4)) == 4 * 17
    assert grams["grams"]["visual.transformer.resblocks.1.mlp.c_proj.weight"].shape == (256, 256)
    assert grams["grams"]["visual.transformer.resblocks.0.attn.in_proj_weight"].shape == (64, 64)


def test_both_layouts_give_the_same_merge(pools):
    one, other = _zoo(pools.roots["open_clip"]), _zoo(pools.roots["hf"])
    for t in TASKS:  # the same images, read once per pool
        assert np.array_equal(one.arrays[t]["test_x"], other.arrays[t]["test_x"])
    # FusionBench experts share the base's projection; give the task_vectors ones the same to compare
    experts = [{**load_state_dict(p), "visual.proj": pools.base["visual.proj"]} for p in one.expert_paths]
    merged_tsv = nbmerge.merge("task_arithmetic", one.base_path, experts, {"scale": 0.3})
    merged_hf = nbmerge.merge("task_arithmetic", other.base_path, other.expert_paths, {"scale": 0.3})
    assert merged_tsv.keys() == merged_hf.keys()
    assert all(torch.equal(merged_tsv[k], merged_hf[k]) for k in merged_tsv)


def test_import_is_idempotent_and_follows_source_changes(pools):
    root = pools.roots["open_clip"]
    manifest_before = (root / "manifest.json").read_bytes()
    stamp = (root / "manifest.json").stat().st_mtime_ns
    messages = []
    options = {**pools.options, "log": messages.append}
    assert import_clip_pool("clip-tiny-3", pools.tsv, pools.data, **options) == root
    assert import_clip_pool("clip-tiny-3", pools.tsv, pools.data, **{**options, "tasks": None}) == root  # kept
    assert (root / "manifest.json").stat().st_mtime_ns == stamp and not messages

    # a re-released expert: only it is converted again
    changed = {k: v + 0.01 for k, v in pools.experts["SVHN"].items()}
    save_open_clip_encoder(changed, pools.tsv / "SVHNVal" / "finetuned.pt", VIT)
    try:
        import_clip_pool("clip-tiny-3", pools.tsv, pools.data, **options)
        text = "\n".join(messages)
        assert "differ" in text and "SVHN expert" in text and "MNIST expert" not in text and "reading" not in text
        manifest = json.loads((root / "manifest.json").read_text())
        assert manifest["checksums"]["experts/SVHN.safetensors"] != \
            json.loads(manifest_before)["checksums"]["experts/SVHN.safetensors"]
        assert torch.equal(load_state_dict(root / "experts/SVHN.safetensors")["visual.ln_post.bias"],
                           changed["visual.ln_post.bias"])
    finally:  # leave the pool as the other tests expect it
        save_open_clip_encoder(pools.experts["SVHN"], pools.tsv / "SVHNVal" / "finetuned.pt", VIT)
        import_clip_pool("clip-tiny-3", pools.tsv, pools.data, **pools.options)


def test_missing_sources_are_named(pools, tmp_path):
    options = {**pools.options, "cache": tmp_path / "cache"}
    missing_expert = tmp_path / "tsv"
    save_open_clip_encoder(pools.base, missing_expert / "zeroshot.pt", VIT)
    save_open_clip_encoder(pools.experts["MNIST"], missing_expert / "MNISTVal" / "finetuned.pt", VIT)
    with pytest.raises(CheckpointError) as error:
        import_clip_pool("clip-tiny-3", missing_expert, pools.data, **options)
    message = str(error.value)
    assert "no expert for EuroSAT, SVHN" in message and "MNIST:" not in message
    for path in ("EuroSATVal/nonlinear_finetuned.pt", "EuroSAT/finetuned.pt", "SVHNVal/finetuned.pt",
                 "svhn/finetuned.pt"):
        assert str(missing_expert / path) in message

    # heads: neither head files nor a text tower
    hf_options = {**options, "tasks": ["MNIST"]}
    with pytest.raises(CheckpointError, match=r"no head file for MNIST.*text_model=[\s\S]*head_MNISTVal.pt"):
        import_clip_pool("clip-tinyhf-1", pools.hf, pools.data, **hf_options)

    (tmp_path / "empty").mkdir()
    with pytest.raises(NbmergeError, match=r"MNIST: no 'train' data under .*empty.*Looked at: .*MNIST/raw"):
        import_clip_pool("clip-tiny-3", pools.tsv, tmp_path / "empty", **options)
    assert not (tmp_path / "cache" / "pools" / "clip-tiny-3" / "manifest.json").exists()
    with pytest.raises(NbmergeError, match="clip-<model>-<n>"):
        import_clip_pool("tiny", pools.tsv, pools.data, **options)
    with pytest.raises(NbmergeError, match="one of"):
        import_clip_pool("clip-tiny-3", pools.tsv, pools.data, **{**options, "tasks": None})


def test_hf_clip_model_base_builds_the_heads(pools, tmp_path):
    root = tmp_path / "fusionbench"
    pytest.importorskip("transformers")
    save_hf_clip_with_text(pools.base, root / HF_BASE, VIT)
    name = load_task_manifest("MNIST")["names"]["fusionbench"]
    _hf_save({k: v for k, v in pools.experts["MNIST"].items() if k != "visual.proj"}, root / f"{HF_BASE}_{name}",
             False)
    options = {**pools.options, "tasks": ["MNIST"], "cache": tmp_path / "cache"}
    zoo = load_zoo("clip-tinyhf-1", import_clip_pool("clip-tinyhf-1", root, pools.data, **options).parent.parent)
    assert zoo.manifest["source"]["text_model"] == str(root / HF_BASE)
    assert "vocab.json" in " ".join(zoo.manifest["source"]["sha256"])
    base = load_state_dict(zoo.base_path)
    assert base.keys() == pools.base.keys() and all(torch.equal(base[k], v) for k, v in pools.base.items())
    head = zoo.heads()["MNIST"]
    assert head.weight.shape == (10, 32) and torch.allclose(head.weight.norm(dim=1), torch.ones(10), atol=1e-5)
    assert not torch.allclose(head.weight[0], head.weight[1])  # the class names reached the text tower
