"""Issue 16, part 4: every notebook runs on a language-model pool given only by its parameters (suite,
checkpoints, data_root, device, cache): four on a GLUE pool of tiny GPT-2 sequence classifiers given as dense
folders (fake GLUE TSVs), three on a causal pool of tiny Llamas given as LoRA adapters (fake texts). Each expert is
fine-tuned for a few steps so that it beats the base (an adapter holds the trained expert's rank-16 approximation).
One notebook per pool keeps the time down: the two pools share every code path but the import, which
tests/test_lm_pools.py covers in both forms."""

import json

import pytest

from nbmerge.report.pipeline import Options, discover, notebook_parameters, run_reports

pytest.importorskip("transformers")

from nbmerge.lm_testing import write_causal_pool, write_fake_glue, write_fake_texts, write_glue_pool  # noqa: E402

SPLIT = {"glue-gpt2-3": ["00_tour", "10_ace", "20_bmm_benchmark", "22_bmm_datafree"],
         "lm-llama-2": ["21_bmm_calibration", "23_bmm_search", "30_pareto"]}
TASKS = {"glue-gpt2-3": ["cola", "rte", "sst2"], "lm-llama-2": ["a", "b"]}  # the folders' order: 00_tour finds them


def test_the_split_covers_every_notebook():
    assert sorted(sum(SPLIT.values(), [])) == sorted(p.stem for p in discover(Options().notebooks))


@pytest.mark.parametrize("suite", list(SPLIT))
def test_notebooks_run_on_a_language_model_pool_by_parameters(tmp_path, suite, monkeypatch):
    tasks = TASKS[suite]
    if suite.startswith("glue"):
        data = write_fake_glue(tmp_path / "data", tasks)
        checkpoints = write_glue_pool(tmp_path / "ck", tasks, "gpt2", data_root=data)
    else:
        data = write_fake_texts(tmp_path / "data", tasks, words=1500)
        checkpoints = write_causal_pool(tmp_path / "ck", tasks, adapters=True, data_root=data)
    overrides = {"suite": suite, "suites": [suite], "tasks": tasks, "checkpoints": str(checkpoints),
                 "data_root": str(data), "device": "cpu", "cache": str(tmp_path / "cache")}
    notebooks = discover(Options().notebooks, tuple(SPLIT[suite]))
    declared = set().union(*(notebook_parameters(p) for p in notebooks))
    overrides = {k: v for k, v in overrides.items() if k in declared}
    monkeypatch.setenv("NBMERGE_CACHE", str(tmp_path / "unused-cache"))
    out = tmp_path / "reports"
    run = run_reports(Options(out=out, smoke=True, only=tuple(SPLIT[suite]), overrides=overrides,
                              log=lambda *_: None))
    failed = {r["name"]: r.get("error") for r in run["reports"] if r["status"] != "ok"}
    assert run["status"] == "complete", failed
    assert not (tmp_path / "unused-cache").exists()
    manifest = json.loads((tmp_path / "cache" / "pools" / suite / "manifest.json").read_text())
    assert manifest["tasks"] == tasks
    # the experts were trained: each beats the base on its own task, so the comparisons are not all at chance
    assert all(manifest["expert_accuracy"]["test"][t] > manifest["base_accuracy"]["test"][t] for t in tasks)
    for name in SPLIT[suite]:
        assert suite in (out / "runs" / run["id"] / f"{name}.html").read_text()
