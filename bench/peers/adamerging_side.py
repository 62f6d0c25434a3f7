"""FusionBench side of the AdaMerging peer check. Runs in FusionBench's own venv; imports nothing from nbmerge.

Usage: <fusionbench-python> adamerging_side.py WORKDIR clamp|noclamp
Reads WORKDIR/config.json (a BERT configuration and the training settings), WORKDIR/base.safetensors,
WORKDIR/experts/<t>.safetensors (keys under nbmerge's ``bert.`` prefix), WORKDIR/inputs/<t>.safetensors (token
ids), WORKDIR/heads/<t>.safetensors (cosine-prototype heads) and WORKDIR/batches.safetensors (the inputs each task
trains on at each step, the same on both sides). Builds FusionBench 0.2.33's ``LayerWiseMergedModel`` over the
encoder (mean-pooled BERT) and runs the loop of its ``LayerWiseAdaMergingAlgorithm.test_time_adaptation``: per
step, each task's ``entropy_loss`` on its batch, backward; then Adam's step and ``merge_weights``. Writes
WORKDIR/fusionbench/adamerging_<mode>.safetensors (the final coefficients as the merge uses them, and every step's
summed loss) and the loop's wall time to timings_<mode>.json.
"""

import json
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file


class Encoder(torch.nn.Module):
    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, ids):
        return self.bert(input_ids=ids).last_hidden_state.mean(1)


def main(workdir, mode):
    from fusion_bench.method.adamerging.entropy_loss import entropy_loss
    from fusion_bench.models.wrappers.layer_wise_fusion import LayerWiseMergedModel, get_layer_wise_weights
    from transformers import BertConfig, BertModel

    work = Path(workdir)
    spec = json.loads((work / "config.json").read_text())
    torch.set_num_threads(int(spec["threads"]))
    names = spec["tasks"]

    def model(path):
        m = Encoder(BertModel(BertConfig(**spec["bert"]), add_pooling_layer=False))
        state = load_file(str(path))
        missing, unexpected = m.load_state_dict(state, strict=False)
        assert not unexpected and all("position_ids" in k or "token_type_ids" in k for k in missing), missing
        return m.eval()

    base = model(work / "base.safetensors")
    experts = [model(work / "experts" / f"{t}.safetensors") for t in names]
    inputs = {t: load_file(str(work / "inputs" / f"{t}.safetensors"))["ids"] for t in names}
    heads = {t: load_file(str(work / "heads" / f"{t}.safetensors")) for t in names}
    batches = load_file(str(work / "batches.safetensors"))
    layers = len([p for p in base.parameters() if p.requires_grad])
    module = LayerWiseMergedModel(layer_wise_weight=get_layer_wise_weights(len(names), layers, spec["init"]),
                                  pretrained_model=base, finetuned_models=experts, clamp_weights=mode == "clamp",
                                  tie_weights=True, strict=False)
    optimizer = torch.optim.Adam([module.merge_weight], lr=spec["lr"])
    module.merge_weights()   # one untimed forward and backward (as nbmerge's warm-up step), then no trace of it
    module(inputs[names[0]][:spec["batch"]]).sum().backward()
    optimizer.zero_grad()
    losses = []
    start = time.perf_counter()
    module.train()
    module.merge_weights()
    for step in range(spec["steps"]):
        total = 0.0
        for t, name in enumerate(names):
            ids = inputs[name][batches[f"{name}.{step}"]]
            features = F.normalize(module(ids), dim=-1)
            logits = heads[name]["logit_scale"] * features @ heads[name]["weight"].T
            loss = entropy_loss(logits)
            loss.backward(retain_graph=True)
            total += loss.item()
        optimizer.step()
        optimizer.zero_grad()
        module.merge_weights()
        losses.append(total)
    elapsed = time.perf_counter() - start
    weights = module.merge_weight.detach().clone()
    if mode == "clamp":
        weights = weights.clamp(0, 1)
    out = work / "fusionbench"
    out.mkdir(exist_ok=True)
    save_file({"lambdas": weights.contiguous(), "losses": torch.tensor(losses, dtype=torch.float64)},
              str(out / f"adamerging_{mode}.safetensors"))
    (out / f"timings_{mode}.json").write_text(json.dumps({"seconds": elapsed}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
