"""nbmerge.models.clip_checkpoints: restricted unpickling of task_vectors-style CLIP pickles, HF ↔ open_clip layouts."""

import builtins
import functools
import json
import os
import sys
import types

import pytest
import torch

from nbmerge.errors import CheckpointError
from nbmerge.engine.io import save_state_dict
from nbmerge.models.clip_checkpoints import (
    extract_image_tower,
    hf_to_open_clip,
    image_encoder_state,
    load_head_file,
    load_hf_clip_vision,
    load_torch_checkpoint,
    open_clip_to_hf,
    open_clip_vision_kwargs,
)

FAKE = "src.modeling"  # where task_vectors defines ImageEncoder and ClassificationHead


def _randomize(module: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Every parameter random (LayerNorm's ones/zeros would hide a swapped weight and bias)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in module.parameters():
            param.copy_(0.2 * torch.randn(param.shape, generator=generator))
    return module


def _vit(seed: int = 0, act_layer=None) -> torch.nn.Module:
    from open_clip.transformer import QuickGELU, VisionTransformer

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        vit = VisionTransformer(image_size=28, patch_size=7, width=64, layers=2, heads=4, mlp_ratio=4.0,
                                output_dim=32, act_layer=act_layer or QuickGELU)
    return _randomize(vit, seed).eval()


def _assert_same(actual: dict, expected: dict) -> None:
    assert list(actual) == list(expected)
    for key, value in expected.items():
        assert actual[key].dtype == value.dtype and torch.equal(actual[key], value), key


@pytest.fixture
def fake_modeling(monkeypatch):
    """Classes living in ``src.modeling`` while the test saves; the module is gone again when it loads."""
    package, module = types.ModuleType("src"), types.ModuleType(FAKE)
    package.modeling = module

    class TinyCLIP(torch.nn.Module):  # stands in for open_clip.model.CLIP: a visual tower, a text tower, logit_scale
        def __init__(self, visual):
            super().__init__()
            self.visual = visual
            self.token_embedding = torch.nn.Embedding(10, 8)
            self.transformer = torch.nn.Sequential(torch.nn.Linear(8, 8))
            self.logit_scale = torch.nn.Parameter(torch.tensor(4.6052))
            self.register_buffer("attn_mask", torch.ones(4, 4), persistent=False)

    class ImageEncoder(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model
            self.train_preprocess = functools.partial(print, "would run at load time")
            try:
                import torchvision.transforms as T

                self.val_preprocess = T.Compose([T.Resize(28), T.ToTensor(), T.Normalize((0.5,), (0.5,))])
            except ImportError:
                self.val_preprocess = None

    class ClassificationHead(torch.nn.Linear):
        def __init__(self, normalize, weights, biases=None):
            super().__init__(weights.shape[1], weights.shape[0])
            self.normalize = normalize
            self.weight = torch.nn.Parameter(weights.clone())
            self.bias = torch.nn.Parameter(biases.clone() if biases is not None else torch.zeros_like(self.bias))

    for cls in (TinyCLIP, ImageEncoder, ClassificationHead):
        cls.__module__, cls.__qualname__ = FAKE, cls.__name__
        setattr(module, cls.__name__, cls)
    monkeypatch.setitem(sys.modules, "src", package)
    monkeypatch.setitem(sys.modules, FAKE, module)

    def forget():
        del sys.modules[FAKE], sys.modules["src"]

    module.forget = forget
    return module


# ----------------------------------------------------------------------------------------------------------
# Pickled modules


def _open_clip_clip():
    from open_clip.model import CLIP, CLIPTextCfg, CLIPVisionCfg

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = CLIP(32, CLIPVisionCfg(layers=2, width=64, head_width=16, patch_size=7, image_size=28),
                     CLIPTextCfg(context_length=8, vocab_size=50, width=32, heads=2, layers=1), quick_gelu=True)
    return _randomize(model, 1)


@pytest.mark.parametrize("clip", ["tiny", "open_clip"])
def test_image_encoder_pickle_loads_as_state_dict(tmp_path, fake_modeling, clip):
    model = fake_modeling.TinyCLIP(_vit()) if clip == "tiny" else _open_clip_clip()
    encoder = fake_modeling.ImageEncoder(model)
    torch.save(encoder, tmp_path / "finetuned.pt")
    fake_modeling.forget()

    state = load_torch_checkpoint(tmp_path / "finetuned.pt")
    _assert_same(state, encoder.state_dict())
    assert "model.attn_mask" not in state  # non-persistent buffer, as state_dict() leaves it out
    tower = image_encoder_state(tmp_path / "finetuned.pt")
    _assert_same(tower, {"visual." + k: v for k, v in model.visual.state_dict().items()})


@pytest.mark.filterwarnings("ignore:Couldn't retrieve source code")  # torch.save's legacy format, on saving
@pytest.mark.parametrize("zipped, protocol", [(True, 2), (False, 2), (True, 4)])
def test_classification_head_pickle(tmp_path, fake_modeling, zipped, protocol):
    weights = torch.randn(5, 32, generator=torch.Generator().manual_seed(0))
    head = fake_modeling.ClassificationHead(True, weights)
    torch.save(head, tmp_path / "head.pt", pickle_protocol=protocol, _use_new_zipfile_serialization=zipped)
    fake_modeling.forget()

    _assert_same(load_torch_checkpoint(tmp_path / "head.pt"), head.state_dict())
    loaded = load_head_file(tmp_path / "head.pt")
    assert torch.equal(loaded.weight, weights) and torch.equal(loaded.bias, torch.zeros(5))
    assert loaded.normalize is True and loaded.logit_scale is None


def test_head_state_dicts(tmp_path):
    weight = torch.randn(3, 8, generator=torch.Generator().manual_seed(0))
    torch.save({"weight": weight.half(), "bias": torch.ones(3)}, tmp_path / "head.pt")
    loaded = load_head_file(tmp_path / "head.pt")
    assert loaded.weight.dtype == torch.float32 and torch.equal(loaded.weight, weight.half().float())
    assert torch.equal(loaded.bias, torch.ones(3)) and loaded.normalize is None
    save_state_dict({"weight": weight, "logit_scale": torch.tensor(100.0)}, tmp_path / "head.safetensors")
    loaded = load_head_file(tmp_path / "head.safetensors")
    assert loaded.bias is None and loaded.logit_scale == 100.0
    torch.save({"weight": weight, "extra": weight}, tmp_path / "bad.pt")
    with pytest.raises(CheckpointError, match="extra"):
        load_head_file(tmp_path / "bad.pt")


def test_plain_state_dicts(tmp_path):
    vit = _vit()
    torch.save(vit.state_dict(), tmp_path / "bare.pt")
    _assert_same(load_torch_checkpoint(tmp_path / "bare.pt"), vit.state_dict())
    expected = {"visual." + k: v for k, v in vit.state_dict().items()}
    _assert_same(image_encoder_state(tmp_path / "bare.pt"), expected)
    torch.save({"module.model." + k: v for k, v in expected.items()} | {"module.model.logit_scale": torch.ones(())},
               tmp_path / "wrapped.pt")
    _assert_same(image_encoder_state(tmp_path / "wrapped.pt"), expected)
    with pytest.raises(CheckpointError, match="several image towers"):
        extract_image_tower({"a.visual.x": torch.ones(1), "b.visual.x": torch.ones(1)})
    with pytest.raises(CheckpointError, match="no image tower"):
        extract_image_tower({"weight": torch.ones(1)})


# ----------------------------------------------------------------------------------------------------------
# Malicious and broken files


class _Dangerous:
    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


@pytest.mark.parametrize("func", [os.system, builtins.exec, builtins.eval])
def test_dangerous_globals_are_refused(tmp_path, func):
    marker = tmp_path / "pwned"
    code = f"touch {marker}" if func is os.system else f"open({str(marker)!r}, 'w').close()"
    torch.save({"weight": torch.ones(2), "payload": _Dangerous(func, code)}, tmp_path / "evil.pt")
    with pytest.raises(CheckpointError, match=f"{func.__name__}.*may be malicious"):
        load_torch_checkpoint(tmp_path / "evil.pt")
    assert not marker.exists()


@pytest.mark.parametrize("gadget", ["numpy.testing", "subprocess.getoutput", "bytearray"])
def test_only_model_libraries_are_stubbed_and_huge_allocations_are_refused(tmp_path, gadget):
    """The unpickler is an allow list: a class or function from outside the model libraries is refused (it used to
    load as a stub: numpy.testing and subprocess gadgets), and bytearray(50 GiB) is not allocated."""
    import subprocess

    import numpy.testing

    payload = {"numpy.testing": _Dangerous(numpy.testing.assert_equal, 1, 1),
               "subprocess.getoutput": _Dangerous(subprocess.getoutput, "true"),
               "bytearray": _Dangerous(bytearray, 50 * 2**30)}[gadget]
    torch.save({"weight": torch.ones(2), "payload": payload}, tmp_path / "gadget.pt")
    with pytest.raises(CheckpointError, match="may be malicious"):
        load_torch_checkpoint(tmp_path / "gadget.pt")


def test_unknown_callables_are_stubbed_not_run(tmp_path, fake_modeling):
    marker = tmp_path / "pwned"

    def write_marker(path):
        open(path, "w").close()

    write_marker.__module__, write_marker.__qualname__ = FAKE, "write_marker"
    fake_modeling.write_marker = write_marker
    encoder = fake_modeling.ImageEncoder(fake_modeling.TinyCLIP(_vit()))
    encoder.payload = _Dangerous(write_marker, str(marker))
    torch.save(encoder, tmp_path / "evil_encoder.pt")
    torch.save(_Dangerous(write_marker, str(marker)), tmp_path / "evil.pt")

    # The function is importable here, and still never called.
    _assert_same(load_torch_checkpoint(tmp_path / "evil_encoder.pt"), encoder.state_dict())
    with pytest.raises(CheckpointError, match="write_marker.*not an nn.Module"):
        load_torch_checkpoint(tmp_path / "evil.pt")
    assert not marker.exists()
    torch.load(tmp_path / "evil.pt", weights_only=False)  # the payload is live: plain torch.load runs it
    assert marker.exists()


def test_broken_files(tmp_path):
    torch.save(_vit().state_dict(), tmp_path / "good.pt")
    data = (tmp_path / "good.pt").read_bytes()
    (tmp_path / "truncated.pt").write_bytes(data[: len(data) // 2])
    (tmp_path / "garbage.pt").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "empty.pt").write_bytes(b"")
    for name in ("truncated.pt", "garbage.pt", "empty.pt"):
        with pytest.raises(CheckpointError, match="corrupt or truncated"):
            load_torch_checkpoint(tmp_path / name)
    with pytest.raises(CheckpointError, match="no such file"):
        load_torch_checkpoint(tmp_path / "missing.pt")
    torch.save({"weight": torch.ones(2), "epoch": 3}, tmp_path / "mixed.pt")
    with pytest.raises(CheckpointError, match="'epoch' is a int, not a tensor"):
        load_torch_checkpoint(tmp_path / "mixed.pt")


# ----------------------------------------------------------------------------------------------------------
# Hugging Face CLIP vision ↔ open_clip


@pytest.mark.parametrize("with_projection", [True, False])
def test_layout_round_trips_are_exact(with_projection):
    state = {"visual." + k: v for k, v in _vit().state_dict().items()}
    if not with_projection:
        del state["visual.proj"]
    hf = open_clip_to_hf(state)
    assert ("visual_projection.weight" in hf) == with_projection
    _assert_same(hf_to_open_clip(hf), state)
    _assert_same(open_clip_to_hf(hf_to_open_clip(hf)), hf)
    full = {**hf, "text_model.embeddings.token_embedding.weight": torch.ones(3, 2), "logit_scale": torch.ones(())}
    _assert_same(hf_to_open_clip(full), state)
    bare = open_clip_to_hf(state, hf_prefix="")  # transformers ≥ 5 CLIPVisionModel
    assert "embeddings.class_embedding" in bare
    _assert_same(hf_to_open_clip(bare), state)
    _assert_same(extract_image_tower(bare), state)


def transformers_5() -> bool:
    import transformers

    return int(transformers.__version__.split(".")[0]) >= 5


def _hf_model(with_projection: bool, tmp_path):
    transformers = pytest.importorskip("transformers")
    config = transformers.CLIPVisionConfig(hidden_size=64, intermediate_size=256, num_hidden_layers=2,
                                           num_attention_heads=4, image_size=28, patch_size=7, projection_dim=32,
                                           hidden_act="quick_gelu")
    cls = transformers.CLIPVisionModelWithProjection if with_projection else transformers.CLIPVisionModel
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = cls(config)
    model = _randomize(model, 3).eval()
    model.save_pretrained(tmp_path / "hf")
    return model, tmp_path / "hf"


@pytest.mark.parametrize("with_projection", [True, False])
def test_hf_model_matches_open_clip(tmp_path, with_projection):
    from open_clip.transformer import VisionTransformer

    model, folder = _hf_model(with_projection, tmp_path)
    state, config = load_hf_clip_vision(folder)
    _assert_same(image_encoder_state(folder), state)
    encoder = VisionTransformer(**open_clip_vision_kwargs(config)).eval()
    if not with_projection:
        encoder.proj = None
    encoder.load_state_dict({k[len("visual."):]: v for k, v in state.items()}, strict=True)
    # transformers ≥ 5 names a plain CLIPVisionModel's tower without the "vision_model." of 4.x
    hf_prefix = "vision_model." if with_projection or not transformers_5() else ""
    model.load_state_dict(open_clip_to_hf(state, hf_prefix=hf_prefix), strict=True)  # the real HF module's names

    images = torch.randn(2, 3, 28, 28, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        output = model(pixel_values=images)
        expected = output.image_embeds if with_projection else output.pooler_output
        actual = encoder(images)
    assert actual.shape == expected.shape
    assert torch.allclose(actual, expected, atol=1e-5, rtol=1e-5), (actual - expected).abs().max()


def test_layout_errors():
    state = {"visual." + k: v for k, v in _vit().state_dict().items()}
    hf = open_clip_to_hf(state)
    missing = {k: v for k, v in hf.items() if k != "vision_model.encoder.layers.1.self_attn.q_proj.weight"}
    with pytest.raises(CheckpointError, match="missing 'vision_model.encoder.layers.1.self_attn.q_proj.weight'"):
        hf_to_open_clip(missing)
    skewed = {**hf, "vision_model.encoder.layers.0.self_attn.k_proj.weight": torch.zeros(32, 64)}
    with pytest.raises(CheckpointError, match=r"q/k/v disagree.*k_proj.weight \[32, 64\]"):
        hf_to_open_clip(skewed)
    narrow = {**hf, "vision_model.encoder.layers.1.mlp.fc2.weight": torch.zeros(64, 128)}
    with pytest.raises(CheckpointError, match=r"layers.1.mlp.fc2.weight.*shape \[64, 128\].*M=256"):
        hf_to_open_clip(narrow)
    with pytest.raises(CheckpointError, match=r"'visual.ln_post.bias': shape \[63\]"):
        open_clip_to_hf({**state, "visual.ln_post.bias": torch.zeros(63)})
    scaled = {**state, "visual.transformer.resblocks.0.ls_1.gamma": torch.ones(64)}
    with pytest.raises(CheckpointError, match="unexpected.*ls_1.gamma.*exclude="):
        open_clip_to_hf(scaled)
    assert open_clip_to_hf(scaled, exclude=["visual.transformer.resblocks.0.ls_"]).keys() == hf.keys()
    with pytest.raises(CheckpointError, match="'wrapper.x' is neither"):
        open_clip_to_hf({**state, "wrapper.x": torch.ones(1)})
    with pytest.raises(CheckpointError, match="no 'visual_projection.weight'"):
        hf_to_open_clip(open_clip_to_hf(state, with_projection=False), with_projection=True)


def test_hf_folder_errors(tmp_path):
    with pytest.raises(CheckpointError, match="not a folder"):
        load_hf_clip_vision(tmp_path / "missing")
    with pytest.raises(CheckpointError, match="no config.json"):
        load_hf_clip_vision(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "clip_vision_model", "hidden_size": 64,
                                                      "num_hidden_layers": 3}))
    with pytest.raises(CheckpointError, match="no \\*.safetensors"):
        load_hf_clip_vision(tmp_path)
    (tmp_path / "pytorch_model.bin").write_bytes(b"")
    with pytest.raises(CheckpointError, match="safetensors only"):
        load_hf_clip_vision(tmp_path)
    save_state_dict(open_clip_to_hf({"visual." + k: v for k, v in _vit().state_dict().items()}),
                    tmp_path / "model.safetensors")
    with pytest.raises(CheckpointError, match="2 layers of width 64; config.json says 3 of 64"):
        load_hf_clip_vision(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "siglip_vision_model"}))
    with pytest.raises(CheckpointError, match="not a CLIP model"):
        load_hf_clip_vision(tmp_path)
    with pytest.raises(CheckpointError, match="hidden_act 'relu'"):
        open_clip_vision_kwargs({"hidden_act": "relu"})
