"""FusionBench side of the RegMean++ peer check. Runs in FusionBench's own venv; imports nothing from nbmerge.

Usage: <fusionbench-python> regmean_plusplus_side.py WORKDIR [float64]
Reads WORKDIR/config.json (a BERT configuration), WORKDIR/base.safetensors, WORKDIR/experts/<t>.safetensors and
WORKDIR/inputs/<t>.safetensors (token ids, no padding), keys under nbmerge's ``bert.`` prefix. Runs FusionBench
0.2.33's ``RegMeanAlgorithmPlusPlus.run`` (its block-by-block driver and its RegMean merge) with the hooks its CLIP
subclass implements written for a BERT encoder: the embeddings averaged, each layer's inputs its merged
predecessor's outputs, each ``nn.Linear``'s mean input Gram recorded by a forward hook on the expert's layer.
Writes WORKDIR/fusionbench/regmean_plusplus.safetensors and the wall time of ``run`` to timings.json; with
``float64``, the same in float64 (models, activations, Grams, inverse) as regmean_plusplus_float64.safetensors: the
reference both float32 results are measured against.
"""

import contextlib
import io
import json
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file


def main(workdir, precision="float32"):
    from fusion_bench.method.regmean_plusplus.regmean_plusplus import RegMeanAlgorithmPlusPlus
    from fusion_bench.modelpool import BaseModelPool
    from transformers import BertConfig, BertModel

    work = Path(workdir)
    spec = json.loads((work / "config.json").read_text())
    torch.set_num_threads(int(spec["threads"]))
    config = BertConfig(**spec["bert"])
    names = spec["tasks"]

    dtype = torch.float64 if precision == "float64" else torch.float32
    job = "regmean_plusplus" + ("_float64" if precision == "float64" else "")

    def model(path):
        m = BertModel(config, add_pooling_layer=False)
        m.load_state_dict({k.removeprefix("bert."): v for k, v in load_file(str(path)).items()}, strict=True)
        return m.to(dtype).eval()

    models = {"_pretrained_": model(work / "base.safetensors")}
    models.update({t: model(work / "experts" / f"{t}.safetensors") for t in names})
    inputs = {t: load_file(str(work / "inputs" / f"{t}.safetensors"))["ids"] for t in names}

    class BertRegMeanPlusPlus(RegMeanAlgorithmPlusPlus):
        def merge_embedding_layer(self, models_to_merge_dict):
            states = [m.state_dict() for m in models_to_merge_dict.values()]
            return {k: torch.stack([s[k] for s in states]).mean(0) for k in states[0] if k.startswith("embeddings.")}

        def get_input_for_first_layer(self, model, train_dataset):
            batch = int(spec["batch"])
            return [model.embeddings(input_ids=train_dataset[i:i + batch]).detach()
                    for i in range(0, len(train_dataset), batch)]

        def get_layers(self, model):
            return model.encoder.layer

        def update_merged_params_dict(self, merged_params_dict, new_merged_params, layer_idx):
            merged_params_dict.update({f"encoder.layer.{layer_idx}.{k}": v for k, v in new_merged_params.items()})
            return merged_params_dict

        def layer_batches_forward(self, layer, batches_input):
            outputs = []
            for batch in batches_input:
                out = layer(batch, attention_mask=None)
                outputs.append((out[0] if isinstance(out, tuple) else out).detach())
            return outputs

        def get_regmean_weights(self, model_name, layer, batches_input, linear_modules_to_merge):
            sums, counts, handles = {}, {}, []

            def hook(name):
                def record(module, args, output):
                    x = args[0].detach().reshape(-1, args[0].shape[-1])
                    sums[name] = sums.get(name, 0) + x.T @ x
                    counts[name] = counts.get(name, 0) + x.shape[0]
                return record

            for name, module in linear_modules_to_merge.items():
                handles.append(module.register_forward_hook(hook(name)))
            self.layer_batches_forward(layer, batches_input)
            for handle in handles:
                handle.remove()
            return {name: sums[name] / counts[name] for name in sums}

    pool = BaseModelPool(models)
    pool.load_train_dataset = lambda name: inputs[name]
    algorithm = BertRegMeanPlusPlus(num_regmean_examples=int(spec["examples"]), exclude_param_names_regex=[],
                                    reduce_non_diagonal_ratio=float(spec["offdiag_scale"]), weight_transpose=True)
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        start = time.perf_counter()
        merged = algorithm.run(pool)
        elapsed = time.perf_counter() - start
    out = work / "fusionbench"
    out.mkdir(exist_ok=True)
    state = {f"bert.{k}": v.detach().contiguous() for k, v in merged.state_dict().items()}
    save_file(state, str(out / f".{job}.safetensors.tmp"))
    (out / f".{job}.safetensors.tmp").replace(out / f"{job}.safetensors")
    timings_path = out / "timings.json"
    timings = json.loads(timings_path.read_text()) if timings_path.exists() else {}
    timings[job] = elapsed
    timings_path.write_text(json.dumps(timings, indent=1))
    print(f"fusionbench {job}: {elapsed:.2f}s", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:3])
