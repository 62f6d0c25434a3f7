"""Language models as the encoder of a pool: Hugging Face sequence classifiers (GPT-2, RoBERTa, Llama-style; the
backbone is merged, each task keeps its own classification head) and causal LMs (the whole model is merged; a task
is next-token prediction on a text).

Both are built from the ``config.json`` the pool records, behind the interface every model family implements
(``models.base.ModelFamily``). Inputs are token ids and
attention masks stacked as ``[N, 2, L]`` int arrays, right-padded, as the text zoo stores them.

Two choices keep every method on one footing:

* GPT-2's ``Conv1D`` layers store their weights (in, out). The encoder built here uses ``nn.Linear`` in their place
  and the pool stores those weights transposed, (out, in) like every other linear layer, so that RegMean's and
  BMM's Grams, and the module groups, see one orientation. ``conv1d_weights`` names the keys the import transposes.
* A causal LM with tied input and output embeddings is built untied: the pool stores ``lm_head.weight`` as its
  own tensor (a copy of the embedding in the base), and each is merged as a weight of its own.

The encoder's ``raw_features`` flag tells ``models.base.features`` not to L2-normalise: a classifier's head and a
causal LM's vocabulary logits read the hidden state as it is.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import asdict, dataclass
from typing import Mapping

import numpy as np
import torch

from ..errors import CheckpointError

#: model types whose sequence classifiers read the first token (BERT-style encoders); the others read the last
#: real token (decoders: GPT-2, Llama, Qwen, Gemma, Mistral ...)
FIRST_TOKEN = frozenset({"bert", "roberta", "xlm-roberta", "camembert", "electra", "deberta", "deberta-v2"})
TASKS = ("classification", "causal")


def _config(config_json: str):
    from transformers import AutoConfig

    data = json.loads(config_json)
    model_type = data.pop("model_type", None)
    if not model_type:
        raise CheckpointError("config.json has no model_type: cannot tell which architecture it is")
    return AutoConfig.for_model(model_type, **data)


def backbone_prefix(config) -> str:
    """The attribute a ``...ForSequenceClassification`` keeps its backbone under ("transformer" for GPT-2,
    "roberta", "model" for Llama): the checkpoint prefix of the weights a GLUE pool merges."""
    from transformers import MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING

    try:
        cls = MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING[type(config)]
    except KeyError:
        raise CheckpointError(f"transformers has no sequence classifier for model type {config.model_type!r}") \
            from None
    return cls.base_model_prefix


def _linear_for_conv1d(module: torch.nn.Module) -> None:
    """Replace every transformers ``Conv1D`` under ``module`` by an ``nn.Linear`` of the same map."""
    from transformers.pytorch_utils import Conv1D

    for name, child in list(module.named_children()):
        if isinstance(child, Conv1D):
            rows, cols = child.weight.shape  # (in, out)
            setattr(module, name, torch.nn.Linear(rows, cols, bias=child.bias is not None))
        else:
            _linear_for_conv1d(child)


def conv1d_weights(config, task: str) -> list[str]:
    """Checkpoint keys (as the HF checkpoint names them) of the ``Conv1D`` weights the pool stores transposed."""
    from transformers import AutoModel, AutoModelForCausalLM
    from transformers.pytorch_utils import Conv1D

    with torch.device("meta"):
        if task == "causal":
            model, prefix = AutoModelForCausalLM.from_config(config), ""
        else:
            model, prefix = AutoModel.from_config(config), backbone_prefix(config) + "."
    return [f"{prefix}{name}.weight" for name, m in model.named_modules() if isinstance(m, Conv1D)]


class SequenceFeatures(torch.nn.Module):
    """A classifier's backbone under its checkpoint attribute; ``forward(x)`` gives the hidden state the head reads:
    the first token's for encoders, the last real token's for decoders."""

    raw_features = True

    def __init__(self, attribute: str, backbone: torch.nn.Module, first_token: bool):
        super().__init__()
        self.attribute, self.first_token = attribute, first_token
        self.add_module(attribute, backbone)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        length = int(x[:, 1].sum(-1).max()) if x.shape[0] else 1
        ids, mask = x[:, 0, :length], x[:, 1, :length]
        hidden = getattr(self, self.attribute)(input_ids=ids, attention_mask=mask).last_hidden_state
        if self.first_token:
            return hidden[:, 0]
        last = (mask.sum(-1) - 1).clamp_min(0)
        return hidden[torch.arange(len(hidden), device=hidden.device), last]


class NextToken(torch.nn.Module):
    """A causal LM whose ``forward(x)`` gives the vocabulary logits after each example's last real token. Its
    children are the LM's own, so its state-dict names are the checkpoint's."""

    raw_features = True

    def __init__(self, lm: torch.nn.Module):
        super().__init__()
        for name, child in lm.named_children():
            self.add_module(name, child)
        self.__dict__["_lm"] = lm  # the LM's forward, over the same modules (not registered twice)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        length = int(x[:, 1].sum(-1).max()) if x.shape[0] else 1
        ids, mask = x[:, 0, :length], x[:, 1, :length]
        last = (mask.sum(-1) - 1).clamp_min(0)
        out = self._lm(input_ids=ids, attention_mask=mask, logits_to_keep=0).logits
        return out[torch.arange(len(out), device=out.device), last].float()


@dataclass(frozen=True)
class LMArchitecture:
    """A Hugging Face language model as a pool's encoder. ``config_json``: the base's config; ``task``:
    "classification" (backbone only, per-task heads) or "causal" (the whole LM; heads are the identity)."""

    config_json: str
    task: str
    max_length: int = 128
    kind: str = "hf_lm"
    label = "Hugging Face language-model experts"
    eval_batch = 256

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def config(self):
        return _config(self.config_json)

    @property
    def model_type(self) -> str:
        return json.loads(self.config_json)["model_type"]

    @property
    def prefix(self) -> str:
        return ""  # the encoder's state-dict names are the checkpoint's (backbone attribute included)

    @property
    def width(self) -> int:
        return int(self.config.hidden_size)

    output_dim = width

    @property
    def layers(self) -> int:
        return int(self.config.num_hidden_layers)

    def build(self, seed: int = 0) -> torch.nn.Module:
        """Random-initialised encoder (the pool's weights are loaded into it), in float32."""
        from transformers import MODEL_MAPPING, AutoModelForCausalLM

        config = self.config
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            if self.task == "causal":
                config.tie_word_embeddings = False
                model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
                _linear_for_conv1d(model)
                return NextToken(model).eval()
            kwargs = {}
            backbone_cls = MODEL_MAPPING[type(config)]
            if "add_pooling_layer" in inspect.signature(backbone_cls.__init__).parameters:
                kwargs["add_pooling_layer"] = False  # the classifiers' checkpoints have no pooler
            backbone = backbone_cls(config, **kwargs).float()
            _linear_for_conv1d(backbone)
        return SequenceFeatures(backbone_prefix(config), backbone, self.model_type in FIRST_TOKEN).eval()

    def inputs(self, x) -> torch.Tensor:
        x = torch.from_numpy(x) if isinstance(x, np.ndarray) else x
        return x.long()

    def gram_recorder(self, encoder: torch.nn.Module):
        """Input Grams of every linear layer of the blocks. A causal LM's output head is left out: like the
        embeddings it is a vocabulary table, which BMM and RegMean leave to the anchor (its Gram would be the final
        hidden state's, and its group none of the four)."""
        from .minilm import LinearGramRecorder

        return LinearGramRecorder(encoder, prefix="", skip=("lm_head",))

    def tokens(self, x: np.ndarray) -> int:
        return int(np.asarray(x)[:, 1].sum())

    def eval_order(self, x: np.ndarray) -> np.ndarray:
        return np.argsort(np.asarray(x)[:, 1].sum(1), kind="stable")


# -- heads -------------------------------------------------------------------------------------------------------

#: the classification heads of the supported families, as checkpoint keys in order (tanh between layers)
HEAD_LAYOUTS = (("classifier.dense", "classifier.out_proj"),  # RoBERTa-style
                ("score",),  # GPT-2, Llama and other decoders
                ("classifier",))  # a plain linear classifier


def head_layers(state: Mapping[str, torch.Tensor]) -> list[str]:
    """The head's modules among a classifier checkpoint's keys (the first layout present)."""
    for layout in HEAD_LAYOUTS:
        if all(f"{m}.weight" in state for m in layout):
            return list(layout)
    raise CheckpointError("no classification head in the checkpoint (looked for "
                          + ", ".join(" + ".join(f"{m}.weight" for m in layout) for layout in HEAD_LAYOUTS) + ")")
