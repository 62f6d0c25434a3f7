"""RegMean++: the block-by-block recorder against a written-out reference, its guard, and the command line."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
import torch

import nbmerge
from nbmerge.errors import MethodError
from nbmerge.engine.io import load_state_dict, save_state_dict
from nbmerge.pools.sequential import encoder_blocks, record_sequential


@dataclass(frozen=True)
class Bert:
    """A 3-layer random BERT behind the zoo-architecture interface (as the text zoo's MiniLM, smaller)."""

    config: dict = field(default_factory=lambda: {
        "vocab_size": 50, "hidden_size": 32, "num_hidden_layers": 3, "num_attention_heads": 4,
        "intermediate_size": 64, "max_position_embeddings": 32, "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0})
    prefix = ""

    def build(self, seed: int = 0):
        from transformers import BertConfig, BertModel

        from nbmerge.models.minilm import SentenceEncoder

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return SentenceEncoder(BertModel(BertConfig(**self.config), add_pooling_layer=False))

    def inputs(self, x):
        return torch.from_numpy(np.asarray(x)).long()

    def gram_recorder(self, encoder):
        from nbmerge.models.minilm import LinearGramRecorder

        return LinearGramRecorder(encoder)


def _pool(tasks: int = 3, examples: int = 12, length: int = 7, pad: bool = False, seed: int = 0):
    arch = Bert()
    base = {k: v.detach().clone() for k, v in arch.build().state_dict().items()}
    gen = torch.Generator().manual_seed(seed)
    experts = [{k: v + 0.05 * v.std().clamp_min(1e-2) * torch.randn(v.shape, generator=gen)
                if v.is_floating_point() else v for k, v in base.items()} for _ in range(tasks)]
    samples = []
    for _ in range(tasks):
        ids = torch.randint(1, 50, (examples, length), generator=gen).numpy()
        mask = np.ones_like(ids)
        if pad:  # ragged lengths: the recorder must leave the padding out of the Grams, as RegMean's does
            for i in range(examples):
                mask[i, 3 + i % (length - 3):] = 0
            ids = ids * mask
        samples.append(np.stack([ids, mask], axis=1))
    return arch, base, experts, samples


def _reference(arch, base, experts, samples, offdiag_scale):
    """RegMean++ written out block by block, in float64, with the layers called one at a time (FusionBench's
    structure): embeddings averaged; per layer, each expert's layer run on the merged predecessors' outputs with
    hooks on its nn.Linear modules; RegMean per weight; the merged layer's outputs feed the next layer."""
    from nbmerge.models.base import load_encoder_weights

    def model(state):
        encoder = arch.build().double().eval()
        load_encoder_weights(encoder, {k: v.double() if v.is_floating_point() else v for k, v in state.items()}, "")
        return encoder.bert

    T = len(experts)
    mean = {k: sum(e[k].double() for e in experts) / T if base[k].is_floating_point() else base[k] for k in base}
    merged = model(mean)
    bert_experts = [model(e) for e in experts]
    xs, masks = [], []
    for s in samples:
        ids, mask = torch.from_numpy(s[:, 0]).long(), torch.from_numpy(s[:, 1]).long()
        xs.append(merged.embeddings(input_ids=ids))
        masks.append(mask)
    extended = [merged._create_attention_masks(attention_mask=m, encoder_attention_mask=None, embedding_output=x,
                                               encoder_hidden_states=None, cache=None)[0] for m, x in zip(masks, xs)]
    out = dict(mean)
    for index, layer in enumerate(merged.encoder.layer):
        grams = [{} for _ in range(T)]
        for t in range(T):
            handles = []
            for name, module in bert_experts[t].encoder.layer[index].named_modules():
                if isinstance(module, torch.nn.Linear):
                    def hook(module, args, output, name=name, t=t):
                        x = args[0].reshape(-1, args[0].shape[-1])[masks[t].reshape(-1).bool()]
                        grams[t][name] = grams[t].get(name, 0) + x.T @ x
                    handles.append(module.register_forward_hook(hook))
            with torch.no_grad():
                bert_experts[t].encoder.layer[index](xs[t], attention_mask=extended[t])
            for h in handles:
                h.remove()
        for name, module in layer.named_modules():
            if not isinstance(module, torch.nn.Linear):
                continue
            key = f"bert.encoder.layer.{index}.{name}.weight"
            shrunk = []
            for g in (gr[name] for gr in grams):
                s = g * offdiag_scale
                s.diagonal().copy_(g.diagonal())
                shrunk.append(s)
            numerator = sum((e[key].double() - base[key].double()) @ s for e, s in zip(experts, shrunk))
            tau = numerator @ torch.linalg.inv(sum(shrunk))
            out[key] = base[key].double() + tau
            module.weight.data.copy_(out[key])
        with torch.no_grad():
            xs = [(lambda o: o[0] if isinstance(o, tuple) else o)(layer(x, attention_mask=e))
                  for x, e in zip(xs, extended)]
    return out


@pytest.mark.parametrize("pad", [False, True])
def test_regmean_plusplus_equals_the_written_out_block_by_block_merge(pad):
    arch, base, experts, samples = _pool(pad=pad)
    recorded = record_sequential(arch, base, experts, samples, 0.9)
    merged = nbmerge.merge("regmean_plusplus", base, experts, {"offdiag_scale": 0.9},
                           grams=[r["grams"] for r in recorded])
    reference = _reference(arch, base, experts, samples, 0.9)
    for key in base:
        if not base[key].is_floating_point():
            continue
        update = (reference[key] - base[key].double()).abs().max().item()
        diff = (merged[key].double() - reference[key]).abs().max().item()
        assert diff <= 1e-4 * update + 1e-7, (key, diff, update)
    # every linear weight of every block got a Gram, and nothing outside the blocks did
    assert set(recorded[0]["grams"]) == {k for k in base if k.startswith("bert.encoder.layer.") and
                                         k.endswith(".weight") and "LayerNorm" not in k}
    assert recorded[0]["tokens"] == int(samples[0][:, 1].sum())


def test_the_first_block_sees_the_averaged_embeddings_and_later_blocks_the_merged_ones():
    """With shared embeddings, block 0's Grams are RegMean's own; block 1's differ from RegMean's (the merged block
    0 feeds it), which is the whole point of the method."""
    arch, base, experts, samples = _pool()
    for e in experts:
        e.update({k: base[k] for k in base if k.startswith("bert.embeddings.")})
    recorded = record_sequential(arch, base, experts, samples, 0.95)
    from nbmerge.models.base import load_encoder_weights

    encoder = arch.build().eval()
    load_encoder_weights(encoder, experts[1], "")
    with torch.inference_mode(), arch.gram_recorder(encoder) as recorder:
        encoder(arch.inputs(samples[1]))
    first = "bert.encoder.layer.0.attention.self.query.weight"
    second = "bert.encoder.layer.1.attention.self.query.weight"
    torch.testing.assert_close(recorded[1]["grams"][first], recorder.grams[first], rtol=1e-5, atol=1e-6)
    assert not torch.allclose(recorded[1]["grams"][second], recorder.grams[second], rtol=1e-3)


def test_the_stack_of_blocks_is_found_for_bert_and_the_open_clip_vit():
    from nbmerge.models.vit import TinyViT

    assert encoder_blocks(Bert().build())[0] == "bert.encoder.layer"
    assert encoder_blocks(TinyViT().build())[0] == "transformer.resblocks"
    with pytest.raises(nbmerge.NbmergeError, match="no stack of blocks"):
        encoder_blocks(torch.nn.Sequential(torch.nn.Linear(2, 2)))


def test_plain_regmean_grams_and_a_different_shrinkage_are_refused(tmp_path):
    arch, base, experts, samples = _pool(tasks=2)
    recorded = record_sequential(arch, base, experts, samples, 0.95)
    plain, sequential = [], []
    for t, r in enumerate(recorded):
        plain.append(tmp_path / f"plain{t}.safetensors")
        save_state_dict(r["grams"], plain[-1])
        sequential.append(tmp_path / f"seq{t}.safetensors")
        save_state_dict(r["grams"], sequential[-1], metadata={"recorded": "sequential", "offdiag_scale": "0.95"})
    with pytest.raises(MethodError, match="plain RegMean's"):
        nbmerge.merge("regmean_plusplus", base, experts, grams=[str(p) for p in plain])
    with pytest.raises(MethodError, match="offdiag_scale 0.95"):
        nbmerge.merge("regmean_plusplus", base, experts, {"offdiag_scale": 0.5}, grams=[str(p) for p in sequential])
    from_files = nbmerge.merge("regmean_plusplus", base, experts, grams=[str(p) for p in sequential])
    in_memory = nbmerge.merge("regmean_plusplus", base, experts, grams=[r["grams"] for r in recorded])
    for key in base:
        assert torch.equal(from_files[key], in_memory[key])


def test_stats_sequential_and_merge_on_the_micro_zoo(micro_cache, tmp_path, capsys):
    """The command line end to end on the vision micro zoo (open_clip layout, fused attention Grams)."""
    from nbmerge.cli import main
    from nbmerge.pools.zoo import load_zoo

    zoo = load_zoo("micro", micro_cache)
    out = tmp_path / "seq"
    assert main(["stats", "--suite", "micro", "--sequential", "--n", "16", "--out", str(out),
                 "--cache", str(micro_cache)]) == 0
    files = [out / f"{t}.safetensors" for t in zoo.tasks]
    grams = load_state_dict(files[0])
    assert "visual.transformer.resblocks.1.attn.in_proj_weight" in grams
    assert len(grams) == 4 * zoo.arch.layers and all(k.startswith("visual.transformer.resblocks.") for k in grams)
    merged = tmp_path / "m.safetensors"
    assert main(["merge", "--method", "regmean_plusplus", "--base", str(zoo.base_path), "--experts",
                 *map(str, zoo.expert_paths), "--grams", *map(str, files), "--out", str(merged)]) == 0
    assert set(load_state_dict(merged)) == set(load_state_dict(zoo.base_path))
    capsys.readouterr()
    assert main(["stats", "--suite", "micro", "--sequential", "--model", str(zoo.base_path), "--out",
                 str(tmp_path / "x"), "--cache", str(micro_cache)]) == 2
    assert "not both" in capsys.readouterr().err


def test_padding_columns_dropped_by_the_encoder_stay_out_of_the_grams():
    """A batch whose longest example is shorter than the stored length is trimmed by the encoder; the recorder's
    padding mask used to stop matching the trimmed rows and every padding token went into the Grams (the text
    zoo's verb_supersense and word_language sample at seed 0). Padded batch = the examples run one by one."""
    arch, _, _, samples = _pool(tasks=1, examples=6, length=9, pad=True)
    x = samples[0]
    assert x[:, 1].sum(1).max() < x.shape[-1]  # the encoder trims this batch
    encoder = arch.build().eval()
    with torch.inference_mode(), arch.gram_recorder(encoder) as batch:
        encoder(arch.inputs(x))
    with torch.inference_mode(), arch.gram_recorder(encoder) as alone:
        for i in range(len(x)):
            n = int(x[i, 1].sum())
            encoder(arch.inputs(x[i:i + 1, :, :n]))
    assert batch.tokens == alone.tokens == int(x[:, 1].sum())
    for key, gram in alone.grams.items():
        torch.testing.assert_close(batch.grams[key], gram, rtol=1e-4, atol=1e-6)
