"""Merge recipes (`nbmerge merge --config recipe.yaml`): the same merge as the flags, per-expert weights, output
dtype, and errors that name the key."""

import pytest
import torch
import yaml

from nbmerge.cli import main
from nbmerge.engine.io import load_state_dict, save_state_dict
from nbmerge.engine.merging import merge


@pytest.fixture
def folder(tmp_path, tiny):
    base, experts = tiny
    save_state_dict(base, tmp_path / "models" / "base.safetensors")
    for i, expert in enumerate(experts):
        save_state_dict(expert, tmp_path / "models" / f"e{i}.safetensors")
    return tmp_path, base, experts


def write(folder, recipe: dict):
    path = folder / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    return str(path)


def test_a_recipe_gives_the_same_file_as_the_flags(folder, capsys):
    root, base, experts = folder
    recipe = {"method": "ties", "base": "models/base.safetensors", "params": {"density": 0.3, "scale": 1.2},
              "experts": [f"models/e{i}.safetensors" for i in range(3)], "out": "by_recipe.safetensors",
              "walk": {"exclude": ["ln_post"]}}
    assert main(["merge", "--config", write(root, recipe)]) == 0
    assert main(["merge", "--method", "ties", "--base", str(root / "models" / "base.safetensors"), "--experts",
                 *[str(root / "models" / f"e{i}.safetensors") for i in range(3)], "--param", "density=0.3",
                 "--param", "scale=1.2", "--exclude", "ln_post", "--out", str(root / "by_flags.safetensors")]) == 0
    assert (root / "by_recipe.safetensors").read_bytes() == (root / "by_flags.safetensors").read_bytes()
    capsys.readouterr()


def test_weights_scale_each_task_vector_and_dtype_casts_the_output(folder):
    root, base, experts = folder
    recipe = {"method": "task_arithmetic", "base": "models/base.safetensors", "dtype": "bfloat16",
              "experts": ["models/e0.safetensors", {"path": "models/e1.safetensors", "weight": 0.5}]}
    assert main(["merge", "--config", write(root, recipe), "--out", str(root / "w.safetensors")]) == 0
    half = {k: base[k] + 0.5 * (experts[1][k] - base[k]) for k in base}
    expected = merge("task_arithmetic", base, [experts[0], half])
    got = load_state_dict(root / "w.safetensors")
    assert all(got[k].dtype == torch.bfloat16 for k in got)
    assert all(torch.equal(got[k], expected[k].to(torch.bfloat16)) for k in expected)


@pytest.mark.parametrize("change, words", [
    ({"colour": "red"}, "unknown key 'colour'"),
    ({"experts": "models/e0.safetensors"}, "experts: expected a list"),
    ({"experts": [{"path": "models/e0.safetensors", "wieght": 2}]}, "unknown key 'wieght'"),
    ({"params": {"density": "lots"}}, "ties.density: expected float"),
    ({"params": {"nonsense": 1}}, "has no parameter 'nonsense'"),
    ({"walk": {"qvk": "split"}}, "walk: unknown key 'qvk'"),
    ({"dtype": "int8"}, "dtype: expected one of"),
    ({"method": "tiess"}, "unknown method 'tiess'"),
    ({"experts": [{"path": "models/e0.safetensors", "weight": "heavy"}]}, "weight: expected a number"),
])
def test_recipe_errors_name_the_key(folder, capsys, change, words):
    root, _, _ = folder
    recipe = {"method": "ties", "base": "models/base.safetensors", "out": "x.safetensors",
              "experts": ["models/e0.safetensors", "models/e1.safetensors"], **change}
    assert main(["merge", "--config", write(root, recipe)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("nbmerge: error:") and words in err and "\n" not in err, err
    assert not (root / "x.safetensors").exists()


def test_a_recipe_and_merge_flags_do_not_mix(folder, capsys):
    root, _, _ = folder
    recipe = {"method": "ties", "base": "models/base.safetensors", "experts": ["models/e0.safetensors"]}
    assert main(["merge", "--config", write(root, recipe), "--method", "tsv", "--out", str(root / "o")]) == 2
    assert "leave out --method" in capsys.readouterr().err
    assert main(["merge", "--config", write(root, recipe)]) == 2
    assert "no output" in capsys.readouterr().err
    assert main(["merge", "--base", "b.safetensors"]) == 2
    assert "merge needs --method, --experts, --out" in capsys.readouterr().err


def test_yaml_aliases_are_refused_and_errors_stay_short(tmp_path):
    """A 532-byte recipe of nested aliases used to grow past 1.5 GB (and its error message ~20 GB)."""
    import time

    from nbmerge.errors import NbmergeError
    from nbmerge.engine.recipe import load_recipe

    bomb = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    bomb += [f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]" for i in range(8)]
    recipe = tmp_path / "bomb.yaml"
    recipe.write_text("\n".join(bomb) + "\nmethod: *i\n")
    start = time.perf_counter()
    with pytest.raises(NbmergeError, match="YAML aliases"):
        load_recipe(recipe)
    assert time.perf_counter() - start < 5
    recipe.write_text("method: ties\nbase: b.safetensors\nexperts: [e.safetensors]\nseed: [" + "1, " * 100_000 + "1]\n")
    with pytest.raises(NbmergeError) as caught:
        load_recipe(recipe)
    assert len(str(caught.value)) < 400 and "seed" in str(caught.value)
    recipe.write_bytes(b"method: \xff\xfe\n")
    with pytest.raises(NbmergeError, match="not UTF-8"):
        load_recipe(recipe)
