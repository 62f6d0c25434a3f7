"""The walk options (nbmerge.engine.walk_options) are declared once: the ``WalkOptions`` fields give ``nbmerge merge``
its flags, a recipe its ``walk:`` keys, and the README's options table its rows."""

import argparse
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from nbmerge.engine import walk_options
from nbmerge.errors import MethodError
from nbmerge.engine.walk_options import WalkOptions

ROOT = Path(__file__).resolve().parents[1]
NOT_WALK = {"--max-shard-size"}   # a README row of the same table that is an output option, not a walk option


def _parser():
    parser = argparse.ArgumentParser()
    walk_options.add_arguments(parser)
    return parser


def test_every_flag_is_a_recipe_key_and_a_field():
    flagged = {f.name for f in walk_options.flagged()}
    assert walk_options.RECIPE_KEYS == flagged <= {f.name for f in fields(WalkOptions)}
    assert flagged == {"matrix_rule", "qkv", "fallback", "exclude", "matrix_exclude", "device", "compute_dtype",
                       "module_kinds"}


def test_the_flags_parse_into_the_recipe_walk_and_build_the_options():
    args = _parser().parse_args(["--matrix-rule", "linear_only", "--qkv", "split", "--exclude", "head", "--exclude",
                                 "cls", "--module-kind", r"fc1\.weight$=mlp_in", "--device", "cpu"])
    walk = walk_options.from_arguments(args, lambda items: dict(i.rsplit("=", 1) for i in items))
    assert walk == {"matrix_rule": "linear_only", "qkv": "split", "fallback": None, "exclude": ["head", "cls"],
                    "matrix_exclude": [], "device": "cpu", "compute_dtype": None,
                    "module_kinds": {r"fc1\.weight$": "mlp_in"}}
    options = WalkOptions(**{k: v for k, v in walk.items() if v is not None})
    assert options.exclude == ("head", "cls") and options.qkv == "split"
    defaults = walk_options.from_arguments(_parser().parse_args([]), dict)
    assert defaults["device"] == "auto" and defaults["qkv"] == WalkOptions().qkv and defaults["exclude"] == []
    with pytest.raises(SystemExit):
        _parser().parse_args(["--fallback", "median"])


@pytest.mark.parametrize("name, value", [("matrix_rule", "all"), ("qkv", None), ("fallback", "median"),
                                         ("compute_dtype", "float16")])
def test_a_value_outside_the_choices_is_refused(name, value):
    with pytest.raises(MethodError, match=name):
        WalkOptions(**{name: value})


def test_the_readme_options_table_lists_exactly_the_flags_and_their_choices():
    readme = (ROOT / "README.md").read_text()
    start = readme.index("Options that change how the model is walked")
    rows = re.findall(r"^\| `(--[\w-]+)( [^`]*)?` \|", readme[start:readme.index("\n\n", readme.index("|---|", start))],
                      re.M)
    documented = {flag: (rest or "").strip() for flag, rest in rows}
    assert set(documented) - NOT_WALK == {f.metadata["flag"] for f in walk_options.flagged()}
    for f in walk_options.flagged():
        choices = f.metadata["choices"]
        if choices and len(choices) > 1:
            assert documented[f.metadata["flag"]].replace("\\|", "|").split("|") == list(choices), f.name


def test_the_cli_parser_is_built_without_torch():
    code = ("import sys\nfrom nbmerge.cli import build_parser\nbuild_parser()\n"
            "assert 'torch' not in sys.modules, 'torch imported'\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
