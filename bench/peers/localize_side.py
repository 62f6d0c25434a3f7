"""The official Localize-and-Stitch side of bench/peers/localize.py, run in its own process.

    python localize_side.py WORK LS_REPO

Imports the official ``localize_utils.py`` (``Localizer``, ``Stitcher``) by file path from ``LS_REPO`` (a checkout of
uiuctml/Localize-and-Stitch; read from there, never copied). Its imports of the vision benchmark's data, heads and
evaluation (``vision.src.*``) and of Hugging Face ``evaluate`` are given stand-ins that hand it this check's inputs:
the classification head of each task, the batches in the order the nbmerge side uses. Its per-epoch evaluation on
the training data (a printout every 5 epochs) is skipped: it does not change the mask. The model is nbmerge's text
encoder class (a BERT behind attention-masked mean pooling) with the check's weights: the inputs, not the method.
Writes ``WORK/official/masks_<task>.safetensors``, ``WORK/official/merged.safetensors`` and the timings.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
import types
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

HEADS: dict = {}


class _Head(torch.nn.Module):
    """logits = scale · normalise(features) · Wᵀ: the cosine-prototype head both sides train through."""

    def __init__(self, state: dict):
        super().__init__()
        self.weight = state["weight"].float()
        self.scale = float(state["logit_scale"])

    def forward(self, features):
        return self.scale * torch.nn.functional.normalize(features, dim=-1) @ self.weight.T


def _stand_ins() -> None:
    def module(name, **attrs):
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        sys.modules[name] = mod
        return mod

    for name in ("vision", "vision.src", "vision.src.vision_datasets"):
        module(name)
    module("vision.src.vision_datasets.common", maybe_dictionarize=lambda data: data)
    module("vision.src.eval", eval_single_dataset=None)
    module("vision.src.modeling", ImageClassifier=None)
    module("vision.src.heads", get_classification_head=lambda args, dataset_name: HEADS[dataset_name])
    module("vision.src.utils", get_logits=None)
    module("evaluate", load=None)


class _Batches:
    """The task's batches, epoch by epoch, in the order the nbmerge side draws them (``orders[e]``)."""

    def __init__(self, ids: torch.Tensor, labels: torch.Tensor, orders: list, batch: int):
        self.ids, self.labels, self.orders, self.batch = ids, labels, orders, batch
        self.epoch = 0

    def __iter__(self):
        order = self.orders[self.epoch]
        self.epoch += 1
        for start in range(0, len(order), self.batch):
            chosen = order[start:start + self.batch]
            yield {"images": self.ids[chosen], "labels": self.labels[chosen]}


def main(work: Path, repo: Path) -> None:
    from transformers import BertConfig, BertModel

    from nbmerge.models.minilm import SentenceEncoder

    spec = json.loads((work / "config.json").read_text())
    torch.set_num_threads(spec["threads"])
    _stand_ins()
    loaded = importlib.util.spec_from_file_location("ls_official", repo / "localize_utils.py")
    official = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(official)

    def model_with(state):
        encoder = SentenceEncoder(BertModel(BertConfig(**spec["bert"]), add_pooling_layer=False))
        encoder.load_state_dict(state)
        return encoder.eval()

    base = load_file(str(work / "base.safetensors"))
    experts = [load_file(str(work / "experts" / f"{t}.safetensors")) for t in spec["tasks"]]
    graft = types.SimpleNamespace(sparsity=spec["sparsity"], sigmoid_bias=spec["sigmoid_bias"],
                                  learning_rate=spec["lr"], l1_strength=spec["l1"], num_train_epochs=spec["epochs"])
    out = work / "official"
    out.mkdir(exist_ok=True)
    seconds, masks = {}, []
    for t, task in enumerate(spec["tasks"]):
        data = load_file(str(work / "inputs" / f"{task}.safetensors"))
        orders = load_file(str(work / "orders" / f"{task}.safetensors"))
        HEADS[task] = _Head(load_file(str(work / "heads" / f"{task}.safetensors")))
        model = model_with(base)
        trainable = dict(model.named_parameters())
        localizer = official.Localizer(trainable, model, model_with(base), model_with(experts[t]), task, None, graft,
                                       model_type="vit")
        localizer.evaluate_vision = lambda dataloader, dataset_name: {"top1": float("nan")}
        batches = _Batches(data["ids"], data["labels"], [orders[str(e)] for e in range(spec["epochs"])],
                           spec["batch"])
        start = time.perf_counter()
        mask, _, _ = localizer.train_graft(batches, task)
        seconds[task] = time.perf_counter() - start
        named = {name: m.bool().contiguous() for name, m in zip(localizer.trainable_name, mask)}
        save_file(named, str(out / f"masks_{task}.safetensors"))
        masks.append([m.float() for m in mask])
    model = model_with(base)
    stitcher = official.Stitcher(dict(model.named_parameters()), model, model_with(base),
                                 [model_with(e) for e in experts], masks)
    merged = stitcher.interpolate_models()
    save_file({k: v.detach().contiguous() for k, v in merged.state_dict().items()}, str(out / "merged.safetensors"))
    (out / "timings.json").write_text(json.dumps({"seconds": seconds, "torch": torch.__version__}))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
