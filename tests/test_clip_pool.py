"""nbmerge.clip.pool / arch: tiny fake CLIP pools in the task_vectors/TSV and FusionBench layouts, imported as zoo
suites that the zoo's evaluator, merge and Gram code run on."""

import json
import sys
import types

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image

import nbmerge
from nbmerge.clip.arch import ClipArchitecture
from nbmerge.clip.checkpoints import open_clip_to_hf
from nbmerge.clip.data import load_task_manifest, write_fake_dataset
from nbmerge.clip.pool import eval_transform, import_clip_pool
from nbmerge.errors import CheckpointError, NbmergeError
from nbmerge.io import load_state_dict
from nbmerge.zoo.build import Store, Zoo, collect_grams, load_zoo
from nbmerge.zoo.model import arch_from_dict
from nbmerge.zoo.train import Recipe

TASKS = ["MNIST", "EuroSAT", "SVHN"]  # IDX, ImageFolder (with its own val split), SVHN .mat: three data layouts
DATA_FORMATS = {"MNIST": "idx", "EuroSAT": "imagefolder", "SVHN": "svhn_mat"}
GRID = (0.3, 1.0)
# What build_zoo writes into a manifest (nbmerge/zoo/build.py); a pool adds "source".
BUILD_ZOO_KEYS = ["suite", "tasks", "recipe", "recipe_hash", "store", "checksums", "classes", "timings", "environment",
                  "base_accuracy", "expert_accuracy", "simple_average_accuracy",
                  "simple_average_normalized_accuracy", "task_arithmetic", "task_arithmetic_normalized_accuracy",
                  "diagnostics", "eval_throughput_images_per_s"]
HF_BASE = "clip-vit-base-patch32"


def _quiet(*_):
    pass


def _vit(seed: int):
    from open_clip.transformer import QuickGELU, VisionTransformer

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        vit = VisionTransformer(image_size=28, patch_size=7, width=64, layers=2, heads=4, mlp_ratio=4.0,
                                output_dim=32, act_layer=QuickGELU)
    return vit.eval()


def _weights():
    """A base tower and one expert per task (base + a small random task vector), ``visual.*`` float32."""
    base = {"visual." + k: v.detach().clone() for k, v in _vit(0).state_dict().items()}
    generator = torch.Generator().manual_seed(1)
    experts = {t: {k: v + 0.02 * torch.randn(v.shape, generator=generator) for k, v in base.items()} for t in TASKS}
    heads = {t: F.normalize(torch.randn(load_task_manifest(t)["num_classes"], 32, generator=generator), dim=-1)
             for t in TASKS}
    return base, experts, heads


def _fake_modeling():
    """task_vectors' ``src.modeling`` classes, defined here so that their pickles name that module."""
    package, module = types.ModuleType("src"), types.ModuleType("src.modeling")
    package.modeling = module

    class TinyCLIP(torch.nn.Module):
        def __init__(self, visual):
            super().__init__()
            self.visual = visual
            self.token_embedding = torch.nn.Embedding(10, 8)
            self.logit_scale = torch.nn.Parameter(torch.tensor(4.6052))

    class ImageEncoder(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

    class ClassificationHead(torch.nn.Linear):
        def __init__(self, normalize, weights):
            super().__init__(weights.shape[1], weights.shape[0])
            self.normalize = normalize
            self.weight = torch.nn.Parameter(weights.clone())
            self.bias = torch.nn.Parameter(torch.zeros_like(self.bias))

    for cls in (TinyCLIP, ImageEncoder, ClassificationHead):
        cls.__module__, cls.__qualname__ = "src.modeling", cls.__name__
        setattr(module, cls.__name__, cls)
    return package, module


def _encoder_pickle(modeling, state, path):
    vit = _vit(0)
    vit.load_state_dict({k[len("visual."):]: v for k, v in state.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(modeling.ImageEncoder(modeling.TinyCLIP(vit)), path)


def write_open_clip_pool(root, base, experts, heads):
    """TSV/task_vectors layout, mixing the folder and file names both use."""
    package, modeling = _fake_modeling()
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "src", package)
        patch.setitem(sys.modules, "src.modeling", modeling)
        _encoder_pickle(modeling, base, root / "zeroshot.pt")
        paths = {"MNIST": "MNISTVal/nonlinear_finetuned.pt", "EuroSAT": "EuroSAT/finetuned.pt",
                 "SVHN": "SVHNVal/finetuned.pt"}
        for task in TASKS:
            _encoder_pickle(modeling, experts[task], root / paths[task])
            name = f"head_{task}Val.pt" if task != "EuroSAT" else f"head_{task}.pt"
            torch.save(modeling.ClassificationHead(True, 100.0 * heads[task]), root / name)  # task_vectors' scaling
    return root


def _hf_save(state, folder, with_projection):
    transformers = pytest.importorskip("transformers")
    config = transformers.CLIPVisionConfig(hidden_size=64, intermediate_size=256, num_hidden_layers=2,
                                           num_attention_heads=4, image_size=28, patch_size=7, projection_dim=32,
                                           hidden_act="quick_gelu")
    cls = transformers.CLIPVisionModelWithProjection if with_projection else transformers.CLIPVisionModel
    model = cls(config)
    prefix = "vision_model." if any(k.startswith("vision_model.") for k in model.state_dict()) else ""
    model.load_state_dict(open_clip_to_hf(state, with_projection=with_projection, hf_prefix=prefix), strict=True)
    model.save_pretrained(folder)


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


def write_hf_pool(root, base, experts):
    """FusionBench layout: a base with the projection, plain CLIPVisionModel experts named <base>_<task>."""
    _hf_save(base, root / HF_BASE, with_projection=True)
    for task in TASKS:
        name = load_task_manifest(task)["names"]["fusionbench"]
        _hf_save({k: v for k, v in experts[task].items() if k != "visual.proj"}, root / f"{HF_BASE}_{name}", False)
    return root


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
    tsv = write_open_clip_pool(tmp / "tsv" / "ViT-tiny", base, experts, heads)
    hf = write_hf_pool(tmp / "fusionbench", base, experts)
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
    recipe = Recipe(**{**zoo.manifest["recipe"], "arch": zoo.arch, "ta_grid": tuple(zoo.manifest["recipe"]["ta_grid"])})
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
    assert (root / "manifest.json").stat().st_mtime_ns == stamp and not messages

    # a re-released expert: only it is converted again
    changed = {k: v + 0.01 for k, v in pools.experts["SVHN"].items()}
    package, modeling = _fake_modeling()
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "src", package)
        patch.setitem(sys.modules, "src.modeling", modeling)
        _encoder_pickle(modeling, changed, pools.tsv / "SVHNVal" / "finetuned.pt")
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
        with pytest.MonkeyPatch.context() as patch:
            patch.setitem(sys.modules, "src", package)
            patch.setitem(sys.modules, "src.modeling", modeling)
            _encoder_pickle(modeling, pools.experts["SVHN"], pools.tsv / "SVHNVal" / "finetuned.pt")
        import_clip_pool("clip-tiny-3", pools.tsv, pools.data, **pools.options)


def test_missing_sources_are_named(pools, tmp_path):
    options = {**pools.options, "cache": tmp_path / "cache"}
    missing_expert = tmp_path / "tsv"
    package, modeling = _fake_modeling()
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "src", package)
        patch.setitem(sys.modules, "src.modeling", modeling)
        _encoder_pickle(modeling, pools.base, missing_expert / "zeroshot.pt")
        _encoder_pickle(modeling, pools.experts["MNIST"], missing_expert / "MNISTVal" / "finetuned.pt")
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


def _hf_full_clip(state, folder):
    """A Hugging Face CLIPModel (image tower ``state``, a random one-layer text tower) with a character-level
    tokenizer written offline: what FusionBench's base folder (openai/clip-vit-base-patch32) holds."""
    import string

    transformers = pytest.importorskip("transformers")
    folder.mkdir(parents=True)
    symbols = list(string.ascii_lowercase + string.digits + string.punctuation)
    vocab = {s: i for i, s in enumerate(symbols)} | {s + "</w>": len(symbols) + i for i, s in enumerate(symbols)}
    vocab |= {"<|startoftext|>": len(vocab), "<|endoftext|>": len(vocab) + 1}
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")  # no merges: words split into characters
    end = vocab["<|endoftext|>"]
    config = transformers.CLIPConfig(
        text_config=dict(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, eos_token_id=end, bos_token_id=end - 1, pad_token_id=end),
        vision_config=dict(hidden_size=64, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                           image_size=28, patch_size=7, hidden_act="quick_gelu"), projection_dim=32)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(6)
        model = transformers.CLIPModel(config)
    result = model.load_state_dict(open_clip_to_hf(state, with_projection=True), strict=False)
    assert not result.unexpected_keys and all(k.startswith(("text_", "logit")) for k in result.missing_keys)
    model.save_pretrained(folder)


def test_hf_clip_model_base_builds_the_heads(pools, tmp_path):
    root = tmp_path / "fusionbench"
    _hf_full_clip(pools.base, root / HF_BASE)
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
