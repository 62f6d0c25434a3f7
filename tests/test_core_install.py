"""`pip install nbmerge` without extras gives a working `nbmerge merge`: the core is torch, safetensors, numpy,
numba (task arithmetic and averaging in one compiled pass) and pyyaml (for `--config` recipes).

No pip runs here (offline, fast): each command runs in a fresh interpreter whose imports are limited to what the
core distributions install (their own modules and their transitive requirements, plus the standard library), the
way a core-only environment would see them. A command that needs an extra fails with the extra's name.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from nbmerge.extras import EXTRAS
from nbmerge.engine.io import load_state_dict, save_state_dict
from nbmerge.testing import openclip_vit_shapes, random_experts, random_model

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
CORE = {"torch", "safetensors", "numpy", "numba", "pyyaml"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(names) -> set[str]:
    """The distributions ``names`` install, with their transitive (non-extra) requirements."""
    seen, todo = set(), [_norm(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            reqs = requires(name) or []
        except PackageNotFoundError:
            continue
        for text in reqs:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(_norm(req.name))
    return seen


def _modules_of(distributions: set[str]) -> set[str]:
    return {top for top, dists in packages_distributions().items() if any(_norm(d) in distributions for d in dists)}


BLOCKER = '''
import importlib.abc, sys
ALLOWED = {allowed!r}
class _CoreOnly(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in ALLOWED or top in sys.stdlib_module_names or top.startswith("_") or top == "nbmerge":
            return None
        raise ModuleNotFoundError(f"No module named {{name!r}} (not in the core install)", name=name)
sys.meta_path.insert(0, _CoreOnly())
'''


def _core_only(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    allowed = sorted(_modules_of(_closure(CORE)))
    script = BLOCKER.format(allowed=allowed) + code
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)})


def test_the_core_dependencies_are_torch_safetensors_numpy_numba_pyyaml():
    assert {_norm(Requirement(r).name) for r in PYPROJECT["dependencies"]} == CORE


def test_every_extra_module_belongs_to_its_extra():
    # nbmerge/extras.py (what the error messages name) agrees with pyproject's extras
    extras = PYPROJECT["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        provided = _modules_of(_closure(Requirement(r).name for r in extras[extra]))
        assert set(modules) <= provided, (extra, set(modules) - provided)
    everything = {Requirement(r).name for extra in EXTRAS for r in extras[extra]}
    assert _norm("nbmerge") not in everything
    assert set(EXTRAS) <= set(Requirement(extras["all"][0]).extras)
    assert {"all", "distributed"} <= set(Requirement(extras["dev"][0]).extras)  # make setup installs every extra


def test_the_blocker_blocks(tmp_path):  # negative control: the harness really hides an extra's module
    out = _core_only("import matplotlib", tmp_path)
    assert out.returncode != 0 and "not in the core install" in out.stderr


@pytest.fixture
def models(tmp_path):
    base = random_model(openclip_vit_shapes(), seed=0)
    experts = random_experts(base, 3, seed=1)
    save_state_dict(base, tmp_path / "base.safetensors")
    for i, expert in enumerate(experts):
        save_state_dict(expert, tmp_path / f"e{i}.safetensors")
    return tmp_path


@pytest.mark.parametrize("method", ["task_arithmetic", "ties", "tsv", "iso_cts", "ace", "bmm", "wudi"])
def test_nbmerge_merge_runs_on_the_core_install(models, method):
    experts = [str(models / f"e{i}.safetensors") for i in range(3)]
    argv = ["merge", "--method", method, "--base", str(models / "base.safetensors"), "--experts", *experts,
            "--out", str(models / f"{method}.safetensors")]
    out = _core_only(f"from nbmerge.cli import main\nsys.exit(main({argv!r}))", models)
    assert out.returncode == 0, out.stderr
    import nbmerge

    expected = nbmerge.merge(method, load_state_dict(models / "base.safetensors"),
                             [load_state_dict(p) for p in experts])
    merged = load_state_dict(models / f"{method}.safetensors")
    assert merged.keys() == expected.keys()
    assert all(bool((merged[k] == expected[k]).all()) for k in merged)


def test_the_python_api_runs_on_the_core_install(models):
    code = ("import nbmerge\nfrom nbmerge.engine.io import load_state_dict\n"
            "base = load_state_dict('base.safetensors')\n"
            "experts = [load_state_dict(f'e{i}.safetensors') for i in range(3)]\n"
            "out = nbmerge.merge('ties', base, experts, {'scale': 0.5})\n"
            "print(len(nbmerge.methods.all_methods()), len(out))\n"
            "from nbmerge.cli import main\nsys.exit(main(['methods']))")
    out = _core_only(code, models)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("argv, extra", [(["report", "--dry-run"], "notebooks"),
                                         (["zoo", "build", "micro", "--quiet"], "zoo")])
def test_a_command_that_needs_an_extra_names_it(tmp_path, argv, extra):
    out = _core_only(f"from nbmerge.cli import main\nsys.exit(main({argv!r}))", tmp_path)
    assert out.returncode == 2, out.stderr
    assert "nbmerge: error:" in out.stderr and f"nbmerge[{extra}" in out.stderr and "Traceback" not in out.stderr
