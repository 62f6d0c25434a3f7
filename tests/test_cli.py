"""The command line, run in-process (``nbmerge.cli.main``) plus one subprocess for the entry point."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import nbmerge
from nbmerge.cli import main
from nbmerge.engine.io import load_state_dict, save_state_dict

REPO = Path(__file__).resolve().parents[1]
METHODS = ("average", "task_arithmetic", "ties", "dare", "tsv", "iso_c", "iso_cts", "regmean", "fisher", "wudi", "ace",
           "bmm")
FC = "visual.transformer.resblocks.0.mlp.c_fc.weight"
FP16_KEY = "visual.ln_post.weight"


@pytest.fixture
def files(tmp_path, tiny):
    """base + 3 experts written to disk (one fp16 tensor, to check dtypes survive); output goes to out/."""
    base, experts = tiny
    base = {k: v.half() if k == FP16_KEY else v for k, v in base.items()}
    experts = [{k: v.half() if k == FP16_KEY else v for k, v in e.items()} for e in experts]
    inputs = tmp_path / "in"
    save_state_dict(base, inputs / "base.safetensors")
    paths = []
    for i, expert in enumerate(experts):
        save_state_dict(expert, inputs / f"e{i}.safetensors")
        paths.append(str(inputs / f"e{i}.safetensors"))
    return {"base": base, "experts": experts, "base_path": str(inputs / "base.safetensors"),
            "expert_paths": paths, "in": inputs, "out_dir": tmp_path / "out",
            "out": str(tmp_path / "out" / "merged.safetensors")}


def run_merge(f, *extra, experts=None, base=None):
    argv = ["merge", "--base", base or f["base_path"], "--experts", *(experts or f["expert_paths"]),
            "--out", f["out"], "--device", "cpu", *extra]
    return main(argv)


def same(a, b):
    assert set(a) == set(b)
    for key in a:
        assert a[key].dtype == b[key].dtype, key
        assert torch.equal(a[key], b[key]), key


def assert_nothing_written(folder):
    assert not folder.exists() or sorted(os.listdir(folder)) == []


def linear_keys(base):
    return [k for k, v in base.items() if v.dim() == 2 and k.endswith("weight") and "embed" not in k]


def write_grams(f, wrong=None):
    gen = torch.Generator().manual_seed(9)
    paths = []
    for t in range(len(f["experts"])):
        grams = {}
        for k in linear_keys(f["base"]):
            d = f["base"][k].shape[1]
            x = torch.randn(3 * d, d, generator=gen)
            grams[k] = x.T @ x
        if wrong is not None and t == 1:
            grams[wrong] = torch.eye(f["base"][wrong].shape[1] + 1)
        path = f["in"] / f"gram{t}.safetensors"
        save_state_dict(grams, path)
        paths.append(str(path))
    return paths


# -- methods ----------------------------------------------------------------------------------------------

def test_methods_lists_every_method_with_its_paper(capsys):
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["method", "statistics"]
    for name in METHODS:
        row = [line for line in lines if line.split()[0] == name]
        assert len(row) == 1, name
        paper = nbmerge.get_method(name).paper
        assert paper.startswith("https://") and paper in row[0], name
    assert "needs grams" in [line for line in lines if line.startswith("regmean ")][0]
    assert "needs fishers" in [line for line in lines if line.startswith("fisher ")][0]
    assert "data-free" in [line for line in lines if line.startswith("tsv ")][0]


def test_methods_verbose_shows_parameter_help(capsys):
    assert main(["methods", "-v"]) == 0
    out = capsys.readouterr().out
    for name in METHODS:
        method = nbmerge.get_method(name)
        assert method.paper in out
        for param in method.params.values():
            assert f"--param {param.name}=" in out
            assert param.help in out, (name, param.name)
    assert "drop rate" in out  # dare's p


def test_entry_point_runs_as_a_module():
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "nbmerge", "methods"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for name in METHODS:
        assert name in done.stdout
    assert "https://arxiv.org/abs/" in done.stdout


# -- merge ------------------------------------------------------------------------------------------------

def test_merge_ties_end_to_end_equals_the_library(files, capsys):
    assert run_merge(files, "--method", "ties", "--param", "density=0.5") == 0
    assert "merged 3 experts with ties" in capsys.readouterr().out
    assert sorted(os.listdir(files["out_dir"])) == ["merged.safetensors"]
    written = load_state_dict(files["out"])
    expected = nbmerge.merge("ties", files["base"], files["experts"], {"density": 0.5})
    same(written, expected)
    assert written[FP16_KEY].dtype == torch.float16
    assert {k: v.dtype for k, v in written.items()} == {k: v.dtype for k, v in files["base"].items()}
    default = nbmerge.merge("ties", files["base"], files["experts"])  # the parameter was used
    assert not torch.equal(written[FC], default[FC])
    from safetensors import safe_open
    with safe_open(files["out"], "pt") as handle:
        meta = handle.metadata()
    assert json.loads(meta["nbmerge"]) == {"method": "ties", "params": {"density": 0.5}}


def test_merge_walk_options_reach_the_walker(files):
    assert run_merge(files, "--method", "tsv", "--matrix-rule", "linear_only", "--qkv", "split",
                     "--exclude", r"ln_post\.", "--matrix-exclude", "c_proj") == 0
    walk = nbmerge.WalkOptions(matrix_rule="linear_only", qkv="split", exclude=(r"ln_post\.",),
                        matrix_exclude=("c_proj",))
    same(load_state_dict(files["out"]), nbmerge.merge("tsv", files["base"], files["experts"], walk=walk))


def test_regmean_with_gram_files(files):
    grams = write_grams(files)
    assert run_merge(files, "--method", "regmean", "--grams", *grams) == 0
    expected = nbmerge.merge("regmean", files["base"], files["experts"],
                             grams=[load_state_dict(g) for g in grams])
    same(load_state_dict(files["out"]), expected)
    average = nbmerge.merge("average", files["base"], files["experts"])
    assert (expected[FC] - average[FC]).abs().max() > 1e-5


def test_max_shard_size_writes_index_and_shards(files):
    assert run_merge(files, "--method", "task_arithmetic", "--max-shard-size", "8K") == 0
    names = sorted(os.listdir(files["out_dir"]))
    index = [n for n in names if n.endswith(".index.json")]
    shards = [n for n in names if n.endswith(".safetensors")]
    assert index == ["merged.safetensors.index.json"]
    assert len(shards) >= 3 and all(n.startswith("merged-0000") for n in shards)
    assert len(names) == len(shards) + 1
    for shard in shards:
        assert (files["out_dir"] / shard).stat().st_size < 8 * 1024 + 4096  # 8 KiB of data + header
    expected = nbmerge.merge("task_arithmetic", files["base"], files["experts"])
    same(load_state_dict(files["out_dir"] / index[0]), expected)
    same(load_state_dict(files["out_dir"]), expected)


def dare_cli(files, out, seed):
    argv = ["merge", "--method", "dare", "--base", files["base_path"], "--experts", *files["expert_paths"],
            "--out", str(out), "--device", "cpu", "--seed", str(seed), "--param", "p=0.5"]
    assert main(argv) == 0
    return out


def test_seed_is_used_by_dare(files, tmp_path):
    a = load_state_dict(dare_cli(files, tmp_path / "a" / "m.safetensors", 7))
    b = load_state_dict(dare_cli(files, tmp_path / "b" / "m.safetensors", 7))
    c = load_state_dict(dare_cli(files, tmp_path / "c" / "m.safetensors", 8))
    same(a, b)
    assert not torch.equal(a[FC], c[FC])
    same(a, nbmerge.merge("dare", files["base"], files["experts"], {"p": 0.5, "seed": 7}))


def test_same_seed_gives_the_same_file_bytes(files, tmp_path):
    # safetensors writes its header metadata map in random order: with two or more metadata keys, 12 identical
    # files would happen by chance with probability at most 2**-11
    first = dare_cli(files, tmp_path / "0" / "m.safetensors", 7).read_bytes()
    for i in range(1, 12):
        assert dare_cli(files, tmp_path / str(i) / "m.safetensors", 7).read_bytes() == first


def test_explicit_seed_param_wins_over_seed_flag(files):
    assert run_merge(files, "--method", "dare", "--seed", "1", "--param", "seed=5") == 0
    same(load_state_dict(files["out"]), nbmerge.merge("dare", files["base"], files["experts"], {"seed": 5}))


# -- bad input: exit code 2, a clear message, nothing written ---------------------------------------------

def check_failure(capsys, code, folder, *keywords):
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.startswith("nbmerge: error: ")
    assert len(captured.err.strip().splitlines()) == 1  # one line, no traceback
    for word in keywords:
        assert word in captured.err, (word, captured.err)
    assert_nothing_written(folder)
    return captured.err


def modified_expert(f, name, change):
    expert = dict(f["experts"][1])
    change(expert)
    path = f["in"] / name
    save_state_dict(expert, path)
    return [f["expert_paths"][0], str(path), f["expert_paths"][2]]


def test_mismatched_keys(files, capsys):
    def rename(e):
        e["visual.renamed.weight"] = e.pop(FC)

    experts = modified_expert(files, "renamed.safetensors", rename)
    code = run_merge(files, "--method", "tsv", experts=experts)
    check_failure(capsys, code, files["out_dir"], "renamed.safetensors", "missing key", FC)


def test_extra_key(files, capsys):
    def add(e):
        e["head.weight"] = torch.zeros(3, 8)

    code = run_merge(files, "--method", "average", experts=modified_expert(files, "extra.safetensors", add))
    check_failure(capsys, code, files["out_dir"], "head.weight", "not in the base")


def test_mismatched_shapes(files, capsys):
    def reshape(e):
        e[FC] = torch.zeros(64, 17)

    code = run_merge(files, "--method", "tsv", experts=modified_expert(files, "shape.safetensors", reshape))
    check_failure(capsys, code, files["out_dir"], "shape mismatch", FC, "[64, 16]", "[64, 17]")


@pytest.mark.parametrize("method", ["tsv", "ties"])
def test_nan_in_an_expert(files, capsys, method):
    key = "visual.ln_post.bias"  # late in the model: tsv has already streamed shards when it is reached

    def poison(e):
        e[key] = e[key].clone()
        e[key][0] = float("nan")

    experts = modified_expert(files, "nan.safetensors", poison)
    code = run_merge(files, "--method", method, "--max-shard-size", "4K", experts=experts)
    check_failure(capsys, code, files["out_dir"], "NaN", key)


def test_unknown_method(files, capsys):
    code = run_merge(files, "--method", "frobnicate")
    err = check_failure(capsys, code, files["out_dir"], "unknown method", "frobnicate")
    for name in METHODS:
        assert name in err


def test_unknown_param(files, capsys):
    code = run_merge(files, "--method", "ties", "--param", "densty=0.5")
    check_failure(capsys, code, files["out_dir"], "densty", "valid parameters", "density", "merge", "scale")


@pytest.mark.parametrize("param,words", [("density=lots", ["ties.density", "expected float", "lots"]),
                                         ("density", ["KEY=VALUE"]),
                                         ("density=0", ["density must be in (0, 1]"])])
def test_bad_param_value(files, capsys, param, words):
    code = run_merge(files, "--method", "ties", "--param", param)
    check_failure(capsys, code, files["out_dir"], *words)


def test_bad_int_param_value(files, capsys):
    code = run_merge(files, "--method", "dare", "--param", "seed=1.5")
    check_failure(capsys, code, files["out_dir"], "dare.seed", "expected int")


def test_corrupt_expert_file(files, capsys):
    bad = files["in"] / "corrupt.safetensors"
    bad.write_bytes(bytes(range(256)) * 16)
    code = run_merge(files, "--method", "tsv", experts=[files["expert_paths"][0], str(bad)])
    check_failure(capsys, code, files["out_dir"], str(bad), "corrupt")


def test_truncated_expert_file(files, capsys):
    data = Path(files["expert_paths"][2]).read_bytes()
    bad = files["in"] / "truncated.safetensors"
    bad.write_bytes(data[: len(data) // 2])
    code = run_merge(files, "--method", "tsv", "--max-shard-size", "4K",
                     experts=[*files["expert_paths"][:2], str(bad)])
    check_failure(capsys, code, files["out_dir"], str(bad), "truncated")


def test_missing_expert_file(files, capsys):
    missing = str(files["in"] / "nope.safetensors")
    code = run_merge(files, "--method", "average", experts=[files["expert_paths"][0], missing])
    check_failure(capsys, code, files["out_dir"], missing, "no such file")


def test_grams_with_mismatched_shape(files, capsys):
    grams = write_grams(files, wrong=FC)
    code = run_merge(files, "--method", "regmean", "--grams", *grams)
    check_failure(capsys, code, files["out_dir"], FC, "[17, 17]", "[16, 16]", "gram1.safetensors")


def test_wrong_number_of_grams(files, capsys):
    grams = write_grams(files)
    code = run_merge(files, "--method", "regmean", "--grams", *grams[:2])
    check_failure(capsys, code, files["out_dir"], "2 grams files for 3 experts")


def test_regmean_without_grams(files, capsys):
    code = run_merge(files, "--method", "regmean")
    check_failure(capsys, code, files["out_dir"], "regmean", "needs grams")


def test_grams_given_to_a_method_that_does_not_use_them(files, capsys):
    grams = write_grams(files)
    code = run_merge(files, "--method", "tsv", "--grams", *grams)
    check_failure(capsys, code, files["out_dir"], "does not use grams")


def test_failed_merge_keeps_an_existing_output(files, capsys):
    assert run_merge(files, "--method", "average") == 0
    before = Path(files["out"]).read_bytes()
    code = run_merge(files, "--method", "ties", "--param", "density=2")
    assert code == 2 and "density" in capsys.readouterr().err
    assert Path(files["out"]).read_bytes() == before
    assert sorted(os.listdir(files["out_dir"])) == ["merged.safetensors"]


def test_the_method_help_lists_the_registry_and_there_is_a_version(capsys):
    """`merge --help` lists the methods from a static tuple (building the parser imports no method): it must equal
    the registry."""
    from nbmerge import cli
    from nbmerge.methods import all_methods

    assert list(cli.METHODS) == [m.name for m in all_methods()]
    with pytest.raises(SystemExit):
        main(["merge", "--help"])
    assert "one of: " + ", ".join(cli.METHODS) in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("nbmerge ")


def test_an_unknown_suite_is_named_as_such(capsys, tmp_path):
    """`zoo info tiny9` used to suggest `zoo build tiny9`, which is not a suite either."""
    assert main(["zoo", "info", "tiny9", "--cache", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown suite 'tiny9'" in err and "tiny8" in err and "zoo build tiny9" not in err


def test_merge_asks_torch_for_huge_pages_only_before_torch_is_imported(monkeypatch):
    from nbmerge.cli import _huge_pages

    monkeypatch.delenv("THP_MEM_ALLOC_ENABLE", raising=False)
    _huge_pages()  # torch is imported in this process: too late to matter, so nothing is set
    assert "THP_MEM_ALLOC_ENABLE" not in os.environ
    monkeypatch.delitem(sys.modules, "torch")
    _huge_pages()
    assert os.environ["THP_MEM_ALLOC_ENABLE"] == "1"
    monkeypatch.setenv("THP_MEM_ALLOC_ENABLE", "0")  # an explicit setting wins
    _huge_pages()
    assert os.environ["THP_MEM_ALLOC_ENABLE"] == "0"


def test_grams_are_matched_to_experts_by_their_recorded_task(tmp_path, capsys):
    """`nbmerge stats` records each Gram file's task: a list in another order than the experts is refused, naming
    both; files without a recorded task are paired by position, and the pairing is echoed."""
    import torch

    from nbmerge.errors import NbmergeError
    from nbmerge.engine.merging import merge_to_file

    gen = torch.Generator().manual_seed(0)
    base = {"fc1.weight": torch.randn(4, 3, generator=gen)}
    paths = {"base": tmp_path / "base.safetensors"}
    save_state_dict(base, paths["base"])
    for task in ("sentiment", "topic"):
        paths[task] = tmp_path / "experts" / f"{task}.safetensors"
        save_state_dict({"fc1.weight": base["fc1.weight"] + torch.randn(4, 3, generator=gen)}, paths[task])
        x = torch.randn(20, 3, generator=gen)
        save_state_dict({"fc1.weight": x.T @ x}, tmp_path / "grams" / f"{task}.safetensors", metadata={"task": task})
        save_state_dict({"fc1.weight": x.T @ x}, tmp_path / "plain" / f"g_{task}.safetensors")
    experts = [str(paths["sentiment"]), str(paths["topic"])]
    grams = [str(tmp_path / "grams" / f"{t}.safetensors") for t in ("sentiment", "topic")]
    args = ["merge", "--method", "regmean", "--base", str(paths["base"]), "--experts", *experts, "--quiet"]
    assert main(args + ["--grams", *grams, "--out", str(tmp_path / "ok.safetensors")]) == 0
    assert "by position" not in capsys.readouterr().out
    assert main(args + ["--grams", *grams[::-1], "--out", str(tmp_path / "swapped.safetensors")]) != 0
    err = capsys.readouterr().err
    assert "holds the statistics of task 'topic', but expert 1 is 'sentiment'" in err and grams[0] in err
    assert not (tmp_path / "swapped.safetensors").exists()
    with pytest.raises(NbmergeError, match="in the experts' order"):   # the library refuses too
        merge_to_file("regmean", str(paths["base"]), experts, tmp_path / "lib.safetensors", grams=grams[::-1])
    plain = [str(tmp_path / "plain" / f"g_{t}.safetensors") for t in ("topic", "sentiment")]
    assert main(args + ["--grams", *plain, "--out", str(tmp_path / "plain.safetensors")]) == 0
    assert "paired with the experts by position" in capsys.readouterr().out


def test_near_misses_get_a_suggestion_and_loose_params_a_clear_error(tmp_path, capsys):
    from nbmerge.errors import did_you_mean
    from nbmerge.progress import _Silent, progress_bar

    args = ["merge", "--base", "b.safetensors", "--experts", "e.safetensors", "--out", str(tmp_path / "o.safetensors")]
    for typo, meant in (("tie", "ties"), ("TIES", "ties"), ("tsvm", "tsv"), ("iso-cts", "iso_cts")):
        assert main(args + ["--method", typo]) == 2
        assert f"did you mean '{meant}'?" in capsys.readouterr().err
    assert main(args + ["--method", "ties", "--param", "density", "0.2"]) == 2
    assert "--param expects KEY=VALUE: write --param density=0.2" in capsys.readouterr().err
    assert main(["report", "--dry-run", "-p", "val_exampels", "20"]) == 2
    assert "did you mean 'val_examples'?" in capsys.readouterr().err
    assert did_you_mean("xyz", ["ties", "tsv"]) == ""
    assert main(args + ["--method", "fisher"]) == 2
    assert "--fishers on the command line" in capsys.readouterr().err
    assert isinstance(progress_bar(10, "x"), _Silent)     # stderr is not a terminal under pytest: no bar


def test_one_expert_is_singular_and_a_configless_merge_folder_is_explained(tmp_path, capsys):
    from nbmerge.evaluate.lm_evaluation import _not_a_model_folder

    base = {"fc1.weight": torch.zeros(2, 2)}
    save_state_dict(base, tmp_path / "base.safetensors")
    save_state_dict({"fc1.weight": torch.ones(2, 2)}, tmp_path / "e.safetensors")
    assert main(["merge", "--method", "task_arithmetic", "--base", str(tmp_path / "base.safetensors"), "--experts",
                 str(tmp_path / "e.safetensors"), "--out", str(tmp_path / "m.safetensors"), "--quiet"]) == 0
    assert "merged 1 expert with task_arithmetic" in capsys.readouterr().out
    (tmp_path / "folder").mkdir()
    save_state_dict(base, tmp_path / "folder" / "model.safetensors")
    said = _not_a_model_folder(tmp_path / "folder")
    assert "no config.json" in said and "--base <the base's folder>" in said
    assert "merge with --base <a Hugging Face folder>" in _not_a_model_folder(tmp_path)
