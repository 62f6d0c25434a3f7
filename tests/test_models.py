"""The model families (nbmerge.models): one interface, one table, records read back by their kind."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nbmerge.errors import NbmergeError
from nbmerge.models import FAMILIES, arch_from_dict
from nbmerge.models.base import ModelFamily
from nbmerge.models.clip import ClipArchitecture
from nbmerge.models.lm import LMArchitecture
from nbmerge.models.minilm import TextArchitecture
from nbmerge.models.vit import TinyViT

GPT2 = json.dumps({"model_type": "gpt2", "n_embd": 32, "n_layer": 2, "n_head": 2, "vocab_size": 64}, sort_keys=True)


@pytest.mark.parametrize("arch", [TinyViT(), ClipArchitecture(image_size=28, patch_size=7, width=64, heads=4),
                                  TextArchitecture(), LMArchitecture(GPT2, "classification")],
                         ids=lambda a: type(a).__name__)
def test_every_family_implements_the_interface_and_reads_back_by_kind(arch):
    assert isinstance(arch, ModelFamily)
    assert FAMILIES[arch.kind] is type(arch)
    record = json.loads(json.dumps(arch.to_dict()))  # as a manifest stores it
    assert arch_from_dict(record) == arch
    assert isinstance(arch.eval_batch, int) and arch.eval_batch > 0


def test_a_tiny_vit_record_has_no_kind_and_the_eval_order_of_images_is_the_stored_one():
    """The tiny ViT's records predate kinds: adding the family table must not change them (a zoo's folder is named
    by its recipe's hash)."""
    assert "kind" not in TinyViT().to_dict()
    assert arch_from_dict({"width": 32}) == TinyViT(width=32)
    assert TinyViT().eval_order(np.zeros((3, 28, 28), np.uint8)) is None
    tokens = np.zeros((3, 2, 4), np.int64)
    tokens[:, 1] = [[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 0, 0]]
    assert TextArchitecture().eval_order(tokens).tolist() == [1, 2, 0]


def test_an_unknown_family_is_a_clear_error():
    with pytest.raises(NbmergeError, match="unknown model family 'resnet'.*tiny_vit"):
        arch_from_dict({"kind": "resnet"})
