"""``nbmerge report``: execute every notebook with papermill, render offline HTML, write the index.

Parameters are layered, last wins: each notebook's own ``parameters`` cell, then ``default.yaml``, then
``smoke.yaml`` (with ``--smoke``), then ``-p KEY VALUE`` overrides. A YAML file maps notebook names (file stems) to
``{parameter: value}``; the key ``all`` applies to every notebook that has that parameter.

Each run goes to a fresh folder ``reports/runs/<id>/`` (executed notebook, HTML, the notebook's working folder
with its ``metrics.json``, the run's own ``index.html`` and ``run.json``). ``reports/index.html`` is replaced
atomically at the end and lists the latest run and the earlier ones, so an interrupted run never leaves a
half-written index, and nothing earlier is overwritten.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml

from ..errors import NbmergeError
from ..io import atomic_write_text
from ..provenance import PROJECT_ROOT, git_sha
from .html import VERDICTS, install_mathjax, render_notebook, write_index

KERNEL_NAME = "nbmerge-report"


@dataclass(frozen=True)
class Options:
    notebooks: Path = PROJECT_ROOT / "notebooks"
    out: Path = PROJECT_ROOT / "reports"
    smoke: bool = False
    only: tuple[str, ...] = ()
    overrides: dict[str, Any] = field(default_factory=dict)
    log: Any = print


def parse_value(text: str) -> Any:
    """``-p`` values are read as YAML scalars/lists: 3 → int, 0.5 → float, true → bool, [a, b] → list."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def discover(notebooks: Path, only: tuple[str, ...] = ()) -> list[Path]:
    found = sorted(p for p in notebooks.glob("*.ipynb") if not p.name.startswith("."))
    if not found:
        raise NbmergeError(f"no notebooks in {notebooks}")
    if only:
        names = {p.stem: p for p in found}
        missing = [n for n in only if n.removesuffix(".ipynb") not in names]
        if missing:
            raise NbmergeError(f"--only: no notebook named {', '.join(missing)} in {notebooks}; "
                               f"available: {', '.join(names)}")
        found = [names[n.removesuffix(".ipynb")] for n in only]
    return found


def _load_layer(path: Path) -> dict[str, dict]:
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise NbmergeError(f"{path}: not valid YAML ({err})") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise NbmergeError(f"{path}: expected a mapping of notebook name → {{parameter: value}}")
    return data


def notebook_parameters(path: Path) -> dict[str, Any]:
    """The defaults declared in the notebook's ``parameters`` cell (there must be exactly one)."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise NbmergeError(f"{path.name}: needs exactly one cell tagged `parameters`, found {len(cells)}")
    namespace: dict[str, Any] = {}
    try:
        exec(compile(cells[0].source, f"{path.name}:parameters", "exec"), {}, namespace)  # literals only
    except Exception as err:
        raise NbmergeError(f"{path.name}: the parameters cell must hold literal assignments only ({err})") from None
    return {k: v for k, v in namespace.items() if not k.startswith("_")}


def resolve_parameters(notebooks: list[Path], params_dir: Path, smoke: bool,
                       overrides: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per notebook: the parameters to inject (every layer's values, checked against the notebook's own)."""
    layers = [("default.yaml", _load_layer(params_dir / "default.yaml"))]
    if smoke:
        layers.append(("smoke.yaml", _load_layer(params_dir / "smoke.yaml")))
    declared = {p.stem: notebook_parameters(p) for p in notebooks}
    known_names = {p.stem for p in sorted(params_dir.parent.glob("*.ipynb"))} | set(declared)
    resolved = {}
    for name, defaults in declared.items():
        chosen: dict[str, Any] = {}
        for file, layer in layers:
            unknown_notebooks = set(layer) - known_names - {"all"}
            if unknown_notebooks:
                raise NbmergeError(f"{file}: no notebook named {', '.join(sorted(unknown_notebooks))}")
            chosen.update({k: v for k, v in layer.get("all", {}).items() if k in defaults})
            for key, value in layer.get(name, {}).items():
                if key not in defaults:
                    raise NbmergeError(f"{file}: notebook {name!r} has no parameter {key!r}; "
                                       f"its parameters: {', '.join(defaults)}")
                chosen[key] = value
        chosen.update({k: v for k, v in overrides.items() if k in defaults})
        for key, value in chosen.items():
            _check_type(name, key, value, defaults[key])
        resolved[name] = chosen
    unused = [k for k in overrides if not any(k in d for d in declared.values())]
    if unused:
        raise NbmergeError(f"-p {', '.join(unused)}: no selected notebook has such a parameter")
    return resolved


def _check_type(notebook: str, key: str, value: Any, default: Any) -> None:
    """A parameter keeps its declared type (an int may stand for a float); papermill itself would not check."""
    if default is None or value is None:
        return
    if isinstance(default, bool) or isinstance(value, bool):
        ok = isinstance(default, bool) and isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float))
    elif isinstance(default, (list, tuple)):
        ok = isinstance(value, (list, tuple))
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise NbmergeError(f"{notebook}: parameter {key!r} is {type(default).__name__} ({default!r}), "
                           f"got {value!r}")


@contextlib.contextmanager
def _project_kernel():
    """A kernelspec for this interpreter, first on JUPYTER_PATH, so notebooks run in the project's environment
    even where a user-level ``python3`` kernelspec points elsewhere."""
    with tempfile.TemporaryDirectory(prefix="nbmerge-kernel-") as root:
        spec = Path(root) / "kernels" / KERNEL_NAME
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "nbmerge (report)", "language": "python",
            # Offline by construction (README); a fixed hash seed keeps set/dict orders reproducible.
            "env": {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONHASHSEED": "0"}}))
        previous = os.environ.get("JUPYTER_PATH")
        os.environ["JUPYTER_PATH"] = root + (os.pathsep + previous if previous else "")
        try:
            yield KERNEL_NAME
        finally:
            if previous is None:
                os.environ.pop("JUPYTER_PATH", None)
            else:
                os.environ["JUPYTER_PATH"] = previous


def _failure_message(err: Exception) -> str:
    from papermill.exceptions import PapermillExecutionError

    if isinstance(err, PapermillExecutionError):
        return f"cell {err.cell_index} (execution count {err.exec_count}): {err.ename}: {err.evalue}"
    return f"{type(err).__name__}: {err}"


def read_metrics(path: Path) -> dict:
    """The notebook's ``metrics.json``, checked: a headline and claims with one of the three verdicts."""
    if not path.exists():
        raise NbmergeError(f"the notebook did not write {path.name} (its last cell must call nbmerge's finish())")
    try:
        metrics = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise NbmergeError(f"{path}: not valid JSON ({err})") from None
    for claim in metrics.get("claims", []):
        if claim.get("verdict") not in VERDICTS:
            raise NbmergeError(f"{path}: claim {claim.get('claim')!r} has verdict {claim.get('verdict')!r}; "
                               f"expected one of {VERDICTS}")
    return metrics


def run_one(notebook: Path, parameters: dict[str, Any], run_dir: Path, mathjax: Path, kernel: str) -> dict:
    import papermill

    name = notebook.stem
    workdir = run_dir / name
    workdir.mkdir(parents=True)
    executed = run_dir / f"{name}.ipynb"
    row: dict[str, Any] = {"name": name, "notebook": executed.name, "parameters": parameters,
                           "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "status": "ok"}
    start = time.perf_counter()
    try:
        papermill.execute_notebook(str(notebook), str(executed), parameters=parameters, kernel_name=kernel,
                                   cwd=str(workdir), progress_bar=False, log_output=False)
        metrics = read_metrics(workdir / "metrics.json")
        row.update(headline=metrics.get("headline"), claims=metrics.get("claims", []),
                   git_sha=metrics.get("fingerprint", {}).get("git_sha", ""), metrics=f"{name}/metrics.json")
    except Exception as err:  # noqa: BLE001 - a failing notebook must not stop the others
        row.update(status="failed", error=_failure_message(err))
    row["seconds"] = time.perf_counter() - start
    if executed.exists():  # the partially executed copy is kept and rendered too
        try:
            row["html"] = render_notebook(executed, run_dir / f"{name}.html", mathjax).name
        except Exception as err:  # noqa: BLE001
            row.update(status="failed", error=row.get("error", "") + f"\nrendering failed: {err}")
    return row


def _earlier_runs(runs_root: Path, exclude: str) -> list[dict]:
    out = []
    for run_json in sorted(runs_root.glob("*/run.json"), reverse=True):
        try:
            run = json.loads(run_json.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if run.get("id") == exclude or run.get("status") not in ("complete", "failed"):
            continue
        failed = sum(r["status"] != "ok" for r in run.get("reports", []))
        out.append({"id": run["id"], "href": f"runs/{run['id']}/index.html",
                    "summary": f"{run['mode']}, {len(run.get('reports', []))} reports"
                               + (f", {failed} failed" if failed else "")})
    return out


def run_reports(options: Options) -> dict:
    """Execute the selected notebooks; returns the run record (``status`` is ``complete`` or ``failed``)."""
    log = options.log
    notebooks = discover(options.notebooks, options.only)
    parameters = resolve_parameters(notebooks, options.notebooks / "parameters", options.smoke, options.overrides)
    out = options.out
    runs_root = out / "runs"
    runs_root.mkdir(parents=True, exist_ok=True)
    mathjax = install_mathjax(out / "_static")
    sha = git_sha(dirty=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    run_id = f"{stamp}-{sha[:7]}" + ("-smoke" if options.smoke else "")
    run_dir = runs_root / run_id
    suffix = 1
    while run_dir.exists():  # two runs in one second: never reuse a folder
        suffix += 1
        run_dir = runs_root / f"{run_id}-{suffix}"
    run_dir.mkdir()
    run = {"id": run_dir.name, "mode": "smoke" if options.smoke else "default", "git_sha": sha,
           "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "status": "running", "reports": []}
    atomic_write_text(run_dir / "run.json", json.dumps(run, indent=2, default=str))
    with _project_kernel() as kernel:
        for notebook in notebooks:
            log(f"[report] {notebook.stem}: running with {parameters[notebook.stem] or 'its defaults'}")
            row = run_one(notebook, parameters[notebook.stem], run_dir, mathjax, kernel)
            run["reports"].append(row)
            atomic_write_text(run_dir / "run.json", json.dumps(run, indent=2, default=str))
            outcome = "ok" if row["status"] == "ok" else f"FAILED: {row['error']}"
            log(f"[report] {notebook.stem}: {outcome} ({row['seconds']:.0f} s)")
    run["status"] = "complete" if all(r["status"] == "ok" for r in run["reports"]) else "failed"
    atomic_write_text(run_dir / "run.json", json.dumps(run, indent=2, default=str))
    earlier = _earlier_runs(runs_root, run["id"])
    write_index(run_dir / "index.html", run, "", [])
    write_index(out / "index.html", run, f"runs/{run['id']}/", earlier)
    log(f"[report] wrote {out / 'index.html'} (run folder {run_dir})")
    return run
