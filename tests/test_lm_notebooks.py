"""Issue 16, part 4: every notebook runs on a language-model pool given only by its parameters (suite,
checkpoints, data_root, device, cache), in both forms: a GLUE pool of tiny GPT-2 sequence classifiers (fake GLUE
TSVs) and a causal pool of tiny Llamas (fake texts), each given once as dense folders and once as LoRA adapters.
Every notebook runs once on a dense pool and once on an adapter pool, and on each pool kind: the notebooks are split
in two halves, and each half runs on the GLUE pool in one form and on the causal pool in the other. Each expert is
fine-tuned for a few steps so that it beats the base (an adapter holds the trained expert's rank-16 approximation)."""

import json

import pytest

from nbmerge.report.pipeline import Options, discover, notebook_parameters, run_reports

pytest.importorskip("transformers")

from nbmerge.lm_testing import write_causal_pool, write_fake_glue, write_fake_texts, write_glue_pool  # noqa: E402

HALVES = (["00_tour", "10_ace", "20_bmm_benchmark", "22_bmm_datafree"],
          ["21_bmm_calibration", "23_bmm_search", "30_pareto"])
#: (suite, experts as adapters, notebooks): each half on the GLUE pool in one form and the causal pool in the other
RUNS = [("glue-gpt2-3", False, HALVES[0]), ("lm-llama-2", True, HALVES[0]),
        ("glue-gpt2-3", True, HALVES[1]), ("lm-llama-2", False, HALVES[1])]
TASKS = {"glue-gpt2-3": ["cola", "rte", "sst2"], "lm-llama-2": ["a", "b"]}  # the folders' order: 00_tour finds them


def test_every_notebook_runs_on_both_forms_and_both_pool_kinds():
    every = sorted(p.stem for p in discover(Options().notebooks))
    for adapters in (False, True):
        assert sorted(sum((n for _, a, n in RUNS if a == adapters), [])) == every
    for kind in ("glue", "lm"):
        assert sorted(sum((n for s, _, n in RUNS if s.startswith(kind)), [])) == every


@pytest.mark.parametrize("suite, adapters, notebooks", RUNS,
                         ids=[f"{s}-{'adapters' if a else 'dense'}" for s, a, _ in RUNS])
def test_notebooks_run_on_a_language_model_pool_by_parameters(tmp_path, suite, adapters, notebooks, monkeypatch):
    tasks = TASKS[suite]
    if suite.startswith("glue"):
        data = write_fake_glue(tmp_path / "data", tasks)
        checkpoints = write_glue_pool(tmp_path / "ck", tasks, "gpt2", adapters=adapters, data_root=data)
    else:
        data = write_fake_texts(tmp_path / "data", tasks, words=1500)
        checkpoints = write_causal_pool(tmp_path / "ck", tasks, adapters=adapters, data_root=data)
    overrides = {"suite": suite, "suites": [suite], "tasks": tasks, "checkpoints": str(checkpoints),
                 "data_root": str(data), "device": "cpu", "cache": str(tmp_path / "cache")}
    paths = discover(Options().notebooks, tuple(notebooks))
    declared = set().union(*(notebook_parameters(p) for p in paths))
    overrides = {k: v for k, v in overrides.items() if k in declared}
    monkeypatch.setenv("NBMERGE_CACHE", str(tmp_path / "unused-cache"))
    out = tmp_path / "reports"
    run = run_reports(Options(out=out, smoke=True, only=tuple(notebooks), overrides=overrides,
                              log=lambda *_: None))
    failed = {r["name"]: r.get("error") for r in run["reports"] if r["status"] != "ok"}
    assert run["status"] == "complete", failed
    assert not (tmp_path / "unused-cache").exists()
    manifest = json.loads((tmp_path / "cache" / "pools" / suite / "manifest.json").read_text())
    assert manifest["tasks"] == tasks
    # the experts were trained: each beats the base on its own task, so the comparisons are not all at chance
    assert all(manifest["expert_accuracy"]["test"][t] > manifest["base_accuracy"]["test"][t] for t in tasks)
    for name in notebooks:
        assert suite in (out / "runs" / run["id"] / f"{name}.html").read_text()
