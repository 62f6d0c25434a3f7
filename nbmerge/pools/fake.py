"""Tiny fake CLIP pools in the layouts real ones ship in, for tests and for trying the pool path without checkpoints.

``write_fake_pool(root, tasks)`` writes one random-weight ViT image tower (the "zero-shot" base), one expert per task
(base + a small random task vector) and one classification head per task, in either

* ``open_clip``: the task_vectors / TALL-masks / TSV layout, pickled ``src.modeling.ImageEncoder`` objects as those
  repositories save them (``zeroshot.pt``, ``<Task>Val/nonlinear_finetuned.pt`` and the other spellings they use,
  ``head_<Task>Val.pt``), or
* ``hf``: FusionBench's layout, Hugging Face ``CLIPVisionModel`` folders ``<base>_<task>`` with safetensors,

plus a fake copy of every task's data in its manifest layout (``write_fake_data``). The pickles name a module
``src.modeling`` that exists only while they are written: reading them back goes through nbmerge's restricted
unpickler, as real checkpoints do.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence, Union

import torch
import torch.nn.functional as F

from ..errors import NbmergeError
from ..models.clip_checkpoints import open_clip_to_hf
from ..tasks.clip import load_task_manifest, write_fake_dataset

PathLike = Union[str, os.PathLike]
HF_BASE = "clip-vit-base-patch32"  # FusionBench's base folder name; experts are <base>_<task>


@dataclass(frozen=True)
class FakeViT:
    """The fake image tower: 28-pixel images in 7-pixel patches (16 tokens + class token), width 64."""
    image_size: int = 28
    patch_size: int = 7
    width: int = 64
    layers: int = 2
    heads: int = 1  # nbmerge's default for a width-64 tower (width // 64), so an import needs no `heads=`
    output_dim: int = 32

    def build(self, seed: int) -> torch.nn.Module:
        from open_clip.transformer import QuickGELU, VisionTransformer

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            vit = VisionTransformer(image_size=self.image_size, patch_size=self.patch_size, width=self.width,
                                    layers=self.layers, heads=self.heads, mlp_ratio=4.0, output_dim=self.output_dim,
                                    act_layer=QuickGELU)
        return vit.eval()


def fake_weights(tasks: Sequence[str], vit: FakeViT = FakeViT(), seed: int = 0, tau: float = 0.02):
    """(base, experts, heads): ``visual.*`` float32 state dicts, and unit-norm head rows [classes, output_dim]."""
    base = {"visual." + k: v.detach().clone() for k, v in vit.build(seed).state_dict().items()}
    generator = torch.Generator().manual_seed(seed + 1)
    experts = {t: {k: v + tau * torch.randn(v.shape, generator=generator) for k, v in base.items()} for t in tasks}
    heads = {t: F.normalize(torch.randn(load_task_manifest(t)["num_classes"], vit.output_dim, generator=generator),
                            dim=-1) for t in tasks}
    return base, experts, heads


@contextlib.contextmanager
def _src_modeling():
    """task_vectors' ``src.modeling`` classes, importable under that name while the pickles are written."""
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
    saved = {name: sys.modules.get(name) for name in ("src", "src.modeling")}
    sys.modules.update({"src": package, "src.modeling": module})
    try:
        yield module
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


# The spellings the task_vectors and TSV releases use, cycled over the tasks so that a pool mixes them.
_EXPERT_FILES = ("{n}Val/nonlinear_finetuned.pt", "{n}/finetuned.pt", "{n}Val/finetuned.pt")
_HEAD_FILES = ("head_{n}Val.pt", "head_{n}.pt", "head_{n}Val.pt")


def _save_encoder(modeling, state: Mapping, path: Path, vit: FakeViT) -> None:
    tower = vit.build(0)
    tower.load_state_dict({k[len("visual."):]: v for k, v in state.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(modeling.ImageEncoder(modeling.TinyCLIP(tower)), path)


def save_open_clip_encoder(state: Mapping, path: PathLike, vit: FakeViT = FakeViT()) -> None:
    """``state`` (``visual.*``) as a pickled task_vectors ``ImageEncoder`` at ``path``."""
    with _src_modeling() as modeling:
        _save_encoder(modeling, state, Path(path), vit)


def write_open_clip_pool(root: PathLike, base: Mapping, experts: Mapping, heads: Mapping,
                         vit: FakeViT = FakeViT()) -> Path:
    """The task_vectors / TSV layout under ``root``; heads carry task_vectors' folded logit scale (100)."""
    root = Path(root)
    with _src_modeling() as modeling:
        _save_encoder(modeling, base, root / "zeroshot.pt", vit)
        for index, (task, state) in enumerate(experts.items()):
            name = load_task_manifest(task)["names"]["tsv"]
            _save_encoder(modeling, state, root / _EXPERT_FILES[index % 3].format(n=name), vit)
            head = modeling.ClassificationHead(True, 100.0 * heads[task])
            torch.save(head, root / _HEAD_FILES[index % 3].format(n=name))
    return root


def save_hf_vision(state: Mapping, folder: PathLike, with_projection: bool, vit: FakeViT = FakeViT()) -> None:
    """``state`` (open_clip names) as a Hugging Face ``CLIPVisionModel[WithProjection]`` folder."""
    import transformers

    config = transformers.CLIPVisionConfig(hidden_size=vit.width, intermediate_size=4 * vit.width,
                                           num_hidden_layers=vit.layers, num_attention_heads=vit.heads,
                                           image_size=vit.image_size, patch_size=vit.patch_size,
                                           projection_dim=vit.output_dim, hidden_act="quick_gelu")
    cls = transformers.CLIPVisionModelWithProjection if with_projection else transformers.CLIPVisionModel
    model = cls(config)
    prefix = "vision_model." if any(k.startswith("vision_model.") for k in model.state_dict()) else ""
    model.load_state_dict(open_clip_to_hf(dict(state), with_projection=with_projection, hf_prefix=prefix),
                          strict=True)
    model.save_pretrained(folder)


def save_hf_clip_with_text(state: Mapping, folder: PathLike, vit: FakeViT = FakeViT(), seed: int = 6) -> None:
    """A Hugging Face ``CLIPModel`` (image tower ``state``, a random one-layer text tower) with a character-level
    tokenizer written offline: what FusionBench's base folder (openai/clip-vit-base-patch32) holds."""
    import string

    import transformers

    folder = Path(folder)
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
        vision_config=dict(hidden_size=vit.width, intermediate_size=4 * vit.width, num_hidden_layers=vit.layers,
                           num_attention_heads=vit.heads, image_size=vit.image_size, patch_size=vit.patch_size,
                           hidden_act="quick_gelu"), projection_dim=vit.output_dim)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = transformers.CLIPModel(config)
    result = model.load_state_dict(open_clip_to_hf(dict(state), with_projection=True), strict=False)
    if result.unexpected_keys or not all(k.startswith(("text_", "logit")) for k in result.missing_keys):
        raise NbmergeError(f"fake CLIPModel: the image tower did not load ({result})")
    model.save_pretrained(folder)


def write_hf_pool(root: PathLike, base: Mapping, experts: Mapping, vit: FakeViT = FakeViT(),
                  text_tower: bool = False) -> Path:
    """FusionBench's layout: a base with the projection, plain ``CLIPVisionModel`` experts named ``<base>_<task>``.
    No head files: with ``text_tower`` the base is a full ``CLIPModel`` whose text tower builds the heads (as
    FusionBench's base folder is); without, the import needs ``text_model=``."""
    root = Path(root)
    if text_tower:
        save_hf_clip_with_text(base, root / HF_BASE, vit)
    else:
        save_hf_vision(base, root / HF_BASE, True, vit)
    for task, state in experts.items():
        name = load_task_manifest(task)["names"]["fusionbench"]
        save_hf_vision({k: v for k, v in state.items() if k != "visual.proj"}, root / f"{HF_BASE}_{name}", False, vit)
    return root


def write_fake_data(root: PathLike, tasks: Sequence[str], n_per_class: int = 2, image_size: int = 36,
                    formats: Optional[Mapping[str, str]] = None) -> Path:
    """Every task's fake dataset under ``root``, each in ``formats[task]`` or its manifest's first layout."""
    formats = dict(formats or {})
    for task in tasks:
        fmt = formats.get(task) or load_task_manifest(task)["layout"]["formats"][0]
        write_fake_dataset(root, task, n_per_class=n_per_class, image_size=image_size, fmt=fmt)
    return Path(root)


def write_fake_pool(root: PathLike, tasks: Sequence[str], fmt: str = "open_clip", vit: FakeViT = FakeViT(),
                    seed: int = 0) -> Path:
    """Fake checkpoints for ``tasks`` under ``root`` in ``fmt``: "open_clip" (with head files) or "hf" (a full
    CLIPModel base whose text tower builds the heads); returns ``root``."""
    base, experts, heads = fake_weights(tasks, vit, seed)
    if fmt == "open_clip":
        return write_open_clip_pool(root, base, experts, heads, vit)
    if fmt == "hf":
        return write_hf_pool(root, base, experts, vit, text_tower=True)
    raise NbmergeError(f"fake pool format {fmt!r}: open_clip or hf")
