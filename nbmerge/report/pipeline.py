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
import logging
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import NbmergeError, RunInterrupted, did_you_mean
from ..engine.io import atomic_write_text
from ..params import fits, notebook_parameters
from ..provenance import PROJECT_ROOT, git_sha
from ..threads import adaptive, chosen_threads
from .html import VERDICTS, documents_in, install_mathjax, render_notebook, write_index
from .validate import check_values

KERNEL_NAME = "nbmerge-report"
# how claims are recorded: 1 = held / did not hold / not tested; 2 = the four outcomes with estimate, interval,
# threshold, mde and reading (nbmerge.evaluate.verdicts)
CLAIMS_SCHEMA = 2


@dataclass(frozen=True)
class Options:
    notebooks: Path = PROJECT_ROOT / "notebooks"
    out: Path = PROJECT_ROOT / "reports"
    smoke: bool = False
    profile: str = "default"        # "default" (fits the hour on 2 cores) or "paper" (the papers' protocol scale)
    only: tuple[str, ...] = ()
    publish: bool = False           # copy a complete default-profile run into reports/published/ (committed)
    overrides: dict[str, Any] = field(default_factory=dict)
    log: Any = print


def parse_value(text: str) -> Any:
    """``-p`` values are read as YAML scalars/lists: 3 → int, 0.5 → float, true → bool, [a, b] → list. Only plain
    values (text, numbers, booleans, null, lists and mappings of them) are parameters: a tagged value (``!!binary``,
    a timestamp, a set) is refused, since papermill writes parameters into the notebook as Python source."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if not _plain(value):
        raise NbmergeError(f"-p value {text[:60]!r} is a {type(value).__name__}; parameters are text, numbers, "
                           "booleans, null, or lists and mappings of them (quote it to pass it as text)")
    return value


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def discover(notebooks: Path, only: tuple[str, ...] = ()) -> list[Path]:
    found = sorted(p for p in notebooks.glob("*.ipynb") if not p.name.startswith("."))
    if not found:
        raise NbmergeError(f"no notebooks in {notebooks}")
    if only:
        names = {p.stem: p for p in found}
        missing = [n for n in only if n.removesuffix(".ipynb") not in names]
        if missing:
            raise NbmergeError(f"--only: no notebook named {', '.join(missing)}{did_you_mean(missing[0], names)} in "
                               f"{notebooks}; "
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


PROFILES = ("default", "paper")


def resolve_parameters(notebooks: list[Path], params_dir: Path, smoke: bool,
                       overrides: dict[str, Any], profile: str = "default") -> dict[str, dict[str, Any]]:
    """Per notebook: the parameters to inject (every layer's values, checked against the notebook's own)."""
    if profile not in PROFILES:
        raise NbmergeError(f"unknown profile {profile!r}; profiles: {', '.join(PROFILES)}")
    layers = [("default.yaml", _load_layer(params_dir / "default.yaml"))]
    if profile != "default":
        if not (params_dir / f"{profile}.yaml").exists():
            raise NbmergeError(f"profile {profile!r}: {params_dir / f'{profile}.yaml'} is missing")
        layers.append((f"{profile}.yaml", _load_layer(params_dir / f"{profile}.yaml")))
    if smoke:
        layers.append(("smoke.yaml", _load_layer(params_dir / "smoke.yaml")))
    declared = {p.stem: notebook_parameters(p) for p in notebooks}
    known_names = {p.stem for p in sorted(params_dir.parent.glob("*.ipynb"))} | set(declared)
    resolved = {}
    origins: dict[str, dict[str, str]] = {}
    for name, defaults in declared.items():
        chosen: dict[str, Any] = {}
        origin = origins.setdefault(name, {})
        for file, layer in layers:
            unknown_notebooks = set(layer) - known_names - {"all"}
            if unknown_notebooks:
                raise NbmergeError(f"{file}: no notebook named {', '.join(sorted(unknown_notebooks))}")
            for key, value in layer.get("all", {}).items():
                if key in defaults:
                    chosen[key], origin[key] = value, f"{file} (all)"
            for key, value in layer.get(name, {}).items():
                if key not in defaults:
                    raise NbmergeError(f"{file}: notebook {name!r} has no parameter {key!r}"
                                       f"{did_you_mean(key, defaults)}; "
                                       f"its parameters: {', '.join(defaults)}")
                chosen[key], origin[key] = value, file
        for key, value in overrides.items():
            if key in defaults:
                chosen[key], origin[key] = value, "-p"
        for key, value in chosen.items():
            _check_type(name, key, value, defaults[key])
        resolved[name] = chosen
    # -p applies to every selected notebook that declares the parameter; a name that no notebook of the folder
    # declares is a typo
    folder = {p.stem: notebook_parameters(p) for p in sorted(params_dir.parent.glob("*.ipynb"))
              if not p.name.startswith(".") and p.stem not in declared}
    unused = [k for k in overrides if not any(k in d for d in [*declared.values(), *folder.values()])]
    if unused:
        known = {k for d in [*declared.values(), *folder.values()] for k in d}
        raise NbmergeError(f"-p {', '.join(unused)}: no notebook has such a parameter"
                           f"{did_you_mean(unused[0], known)}")
    # the values themselves (suites, methods, ranges...), on each notebook's defaults under every layer: a bad one
    # fails here, in one line, rather than inside the notebook minutes later
    check_values({name: {**declared[name], **resolved[name]} for name in declared}, origins)
    return resolved


def _check_type(notebook: str, key: str, value: Any, default: Any) -> None:
    """A parameter keeps its declared type (an int may stand for a float); papermill itself would not check."""
    ok = fits(value, default)
    if not ok:
        raise NbmergeError(f"{notebook}: parameter {key!r} is {type(default).__name__} ({default!r}), "
                           f"got {value!r}")


@contextlib.contextmanager
def _project_kernel():
    """A kernelspec for this interpreter, first on JUPYTER_PATH, so notebooks run in the project's environment
    even where a user-level ``python3`` kernelspec points elsewhere."""
    with tempfile.TemporaryDirectory(prefix=f"nbmerge-kernel-{os.getpid()}-") as root:
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
    """The notebook's ``metrics.json``, checked: a headline and claims with one of the four outcomes, each decided
    claim with the numbers its outcome follows from (:func:`check_claim`)."""
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
        problem = check_claim(claim)
        if problem:
            raise NbmergeError(f"{path}: claim {claim.get('id')!r}: {problem}")
    return metrics


def check_claim(claim: dict) -> "str | None":
    """Why a recorded claim's outcome does not follow from its interval and threshold (None when it does)."""
    from ..evaluate.verdicts import OUTCOMES

    outcome = claim.get("outcome")
    if outcome not in OUTCOMES or outcome != claim.get("verdict"):
        return f"outcome {outcome!r} (verdict {claim.get('verdict')!r})"
    if not claim.get("id"):
        return "no id"
    if outcome == "not tested":
        return None if (claim.get("evidence") or claim.get("why")) else "not tested without a reason"
    interval, threshold, estimate = claim.get("interval"), claim.get("threshold"), claim.get("estimate")
    if not (isinstance(interval, list) and len(interval) == 2 and estimate is not None and threshold is not None):
        return "a decided claim needs estimate, interval [lo, hi] and threshold"
    lo, hi = interval
    if not lo <= hi:
        return f"interval {interval} is not ordered"
    if isinstance(threshold, list):
        expected = ("held" if lo > threshold[0] and hi < threshold[1] else
                    "contradicted" if lo >= threshold[1] or hi <= threshold[0] else "inconclusive")
    else:
        effect = claim.get("effect")
        expected = ("held" if lo > threshold else
                    "contradicted" if hi <= threshold or (effect is not None and effect > threshold and hi < effect)
                    else "inconclusive")
    if expected != outcome:
        return f"outcome {outcome!r} does not follow from interval {interval} and threshold {threshold} ({expected!r})"
    if claim.get("reading") not in ("paper", "strict"):
        return f"reading {claim.get('reading')!r}"
    return None


class _Stop(BaseException):
    """Raised in the main thread by the SIGINT/SIGTERM handler while a run is in progress. Not an ``Exception``:
    nothing that catches a notebook's failure catches it, and every ``finally`` on the way runs (the kernel's
    temporary kernelspec folder is removed, the kernel is stopped)."""

    def __init__(self, signal_name: str):
        super().__init__(signal_name)
        self.signal_name = signal_name


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _signals_stop_the_run():
    """While the block runs, SIGINT and SIGTERM raise ``_Stop`` in the main thread; a second signal while the run
    is being stopped is ignored, so that the cleanup completes. The previous handlers are restored afterwards.
    Off the main thread (where Python cannot set handlers) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def handler(signum, _frame):
        if received:
            return
        received.append(signum)
        raise _Stop(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)


KILL_GRACE_S = 30.0  # how long a stopped run waits for the notebook's worker thread once its kernel is killed


def _kill_kernel(manager) -> None:
    """SIGKILL a kernel and its process group (the kernel leads its own session: it never shares ours)."""
    provisioner = getattr(manager, "provisioner", None)
    pid, pgid = getattr(provisioner, "pid", None), getattr(provisioner, "pgid", None)
    if not pid:
        return
    with contextlib.suppress(OSError):
        if pgid and pgid == pid and pgid != os.getpgid(0):
            os.killpg(pgid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)


def _kernel_manager_class():
    """The kernel manager every report kernel runs under (built on first use: jupyter_client is imported lazily).

    * The kernel talks to us over Unix sockets in a private folder (``ipc_dir``), not over localhost TCP, which every
      kernel start warned about ("running over TCP without encryption").
    * A normal shutdown sends no SIGINT. jupyter_client interrupts the kernel before asking it to shut down; a kernel
      still finishing a message handler then logs "KeyboardInterrupt caught in kernel" to stderr after a run that
      succeeded. The shutdown request goes over the control channel, which a busy kernel answers too, and a kernel
      that does not exit is still terminated and then killed by jupyter_client's own shutdown."""
    from jupyter_client import AsyncKernelManager

    class QuietKernelManager(AsyncKernelManager):
        def __init__(self, ipc_dir: str | None = None, **kwargs):
            super().__init__(**kwargs)
            if ipc_dir is not None:
                self.transport, self.ip = "ipc", os.path.join(ipc_dir, "kernel")

        async def _async_interrupt_kernel(self) -> None:
            if self.shutting_down:
                return
            await super()._async_interrupt_kernel()

    return QuietKernelManager


#: the kernel option that makes a report's kernel re-choose its thread count before each cell (nbmerge/threads.py)
CELL_THREADS = "--IPKernelApp.exec_lines=import nbmerge.threads; nbmerge.threads.govern_cells()"


def _execute(notebook: Path, executed: Path, parameters: dict[str, Any], kernel: str, workdir: Path) -> None:
    """``papermill.execute_notebook`` in a worker thread, the kernel started by a manager this function can reach.

    Run in the main thread, nbclient would take SIGINT and SIGTERM for itself (it shuts the kernel down, and the
    notebook merely fails, the run going on with the next one); off the main thread it cannot, so both reach the
    run's own handler (``_signals_stop_the_run``). When the wait for the worker is interrupted, the kernel is killed:
    the worker's nbclient sees it die within a second, cleans up, and the interruption goes on up."""
    import papermill

    started: list = []
    stopping = threading.Event()

    ipc = tempfile.mkdtemp(prefix=f"nbmerge-ipc-{os.getpid()}-")

    class Manager(_kernel_manager_class()):
        def __init__(self, **kwargs):
            super().__init__(ipc_dir=ipc, **kwargs)

        async def start_kernel(self, **kwargs):
            if stopping.is_set():
                raise RuntimeError("the report run is stopping: no kernel is started")
            started.append(self)
            following = adaptive()
            threads = chosen_threads()  # as many as the cores idle now (None: the user fixed it)
            if threads is not None:
                kwargs["env"] = {**(kwargs.get("env") or os.environ), "OMP_NUM_THREADS": str(threads)}
            if following:  # ... and re-chosen before every cell from what other processes used during the last one
                kwargs["extra_arguments"] = [*kwargs.get("extra_arguments", ()), CELL_THREADS]
            return await super().start_kernel(**kwargs)

    outcome: dict[str, BaseException] = {}
    done = threading.Event()

    def work():
        try:
            papermill.execute_notebook(str(notebook), str(executed), parameters=parameters, kernel_name=kernel,
                                       cwd=str(workdir), progress_bar=False, log_output=False,
                                       kernel_manager_class=Manager)
        except BaseException as err:  # noqa: BLE001 - handed to the main thread
            outcome["error"] = err
        finally:
            done.set()

    worker = threading.Thread(target=work, name=f"nbmerge-report-{notebook.stem}", daemon=True)
    worker.start()
    try:
        while not done.wait(0.2):
            pass
    except BaseException:
        stopping.set()
        # nbclient logs the kernel's death it is about to see ("Kernel died while waiting for execute reply"): the
        # stop is reported once, by the caller
        papermill_log = logging.getLogger("papermill")
        level = papermill_log.level
        papermill_log.setLevel(logging.CRITICAL + 1)
        try:
            deadline = time.monotonic() + KILL_GRACE_S
            while not done.is_set() and time.monotonic() < deadline:
                for manager in list(started):  # again and again: a kernel may be starting right now
                    _kill_kernel(manager)
                done.wait(0.2)
        finally:
            papermill_log.setLevel(level)
        raise
    finally:
        shutil.rmtree(ipc, ignore_errors=True)
    worker.join()
    if "error" in outcome:
        raise outcome["error"]


def run_one(notebook: Path, parameters: dict[str, Any], run_dir: Path, mathjax: Path, kernel: str) -> dict:
    name = notebook.stem
    workdir = run_dir / name
    workdir.mkdir(parents=True)
    executed = run_dir / f"{name}.ipynb"
    row: dict[str, Any] = {"name": name, "notebook": executed.name, "parameters": parameters,
                           "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "status": "ok"}
    start = time.perf_counter()
    # only what differs from the notebook's own parameters cell is injected: a default run's page shows one
    # parameters cell, the one Run All in JupyterLab runs
    declared = notebook_parameters(notebook)
    injected = {k: v for k, v in parameters.items() if k not in declared or declared[k] != v}
    try:
        _execute(notebook, executed, injected, kernel, workdir)
        metrics = read_metrics(workdir / "metrics.json")
        row.update(headline=metrics.get("headline"), claims=metrics.get("claims", []),
                   git_sha=metrics.get("fingerprint", {}).get("git_sha", ""), metrics=f"{name}/metrics.json")
    except Exception as err:  # noqa: BLE001 - a failing notebook must not stop the others
        row.update(status="failed", error=_failure_message(err))
    row["seconds"] = time.perf_counter() - start
    if executed.exists():  # the partially executed copy is kept and rendered too
        try:
            row["html"] = render_notebook(executed, run_dir / f"{name}.html", mathjax,
                                          index_path=run_dir.parent.parent / "index.html").name
        except Exception as err:  # noqa: BLE001
            row.update(status="failed", error=row.get("error", "") + f"\nrendering failed: {err}")
    return row


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, TypeError, OverflowError):
        return True  # someone else's process, or no pid recorded: not ours to judge
    return True


def _close_orphaned_runs(runs_root: Path, log=print) -> None:
    """A run whose process was killed (kill -9, a power cut) stays "running" in its run.json: a later run on the
    same machine marks it interrupted, since its process is gone."""
    for run_json in runs_root.glob("*/run.json"):
        try:
            run = json.loads(run_json.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if run.get("status") == "running" and run.get("host") == socket.gethostname() and "pid" in run \
                and not _alive(run["pid"]):
            run.update(status="interrupted", interrupted=f"its process ({run['pid']}) ended without closing the "
                                                         "run (killed?); found by a later run")
            atomic_write_text(run_json, json.dumps(run, indent=2, default=str))
            log(f"[report] run {run.get('id')}: its process is gone; marked interrupted")


_TEMPORARY = re.compile(r"^nbmerge-(?:kernel|ipc)-(?P<pid>\d+)-")


def _sweep_temporaries(log=print) -> None:
    """Remove the kernelspec and socket folders that runs killed with kill -9 left in TMPDIR (named by their
    process id, which is gone)."""
    root = Path(tempfile.gettempdir())
    for entry in root.iterdir():
        match = _TEMPORARY.match(entry.name)
        if match and entry.is_dir() and not _alive(match["pid"]):
            shutil.rmtree(entry, ignore_errors=True)
            log(f"[report] removed {entry}, left by a run whose process is gone")


def _finished_runs(runs_root: Path, exclude: str) -> list[dict]:
    """The ``run.json`` of every complete or failed run under ``runs_root`` but ``exclude``, newest first."""
    out = []
    for run_json in sorted(runs_root.glob("*/run.json"), reverse=True):
        try:
            run = json.loads(run_json.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if run.get("id") != exclude and run.get("status") in ("complete", "failed"):
            out.append(run)
    return out


def _earlier_runs(runs_root: Path, exclude: str) -> list[dict]:
    out = []
    for run in _finished_runs(runs_root, exclude):
        failed = sum(r["status"] != "ok" for r in run.get("reports", []))
        out.append({"id": run["id"], "href": f"runs/{run['id']}/index.html",
                    "summary": f"{run['mode']}, {len(run.get('reports', []))} reports"
                               + (f", {failed} failed" if failed else "")})
    return out


def _latest_elsewhere(runs_root: Path, exclude: str, present: set[str], names: list[str]) -> list[dict]:
    """For each notebook in ``names`` that this run did not execute (an ``--only`` run), its newest row from an
    earlier run, with ``run`` (that run's id) and links made relative to the top-level index."""
    found: dict[str, dict] = {}
    for run in _finished_runs(runs_root, exclude):
        for row in run.get("reports", []):
            name = row.get("name")
            if name in names and name not in present and name not in found:
                found[name] = {**row, "run": run["id"], "mode": run.get("mode", "")}
    return [found[name] for name in names if name in found]


def suites_used(parameters: dict[str, dict[str, Any]]) -> list[str]:
    """The embedded zoo suites the notebooks will open (their ``suite``/``suites`` parameters), in first-use order."""
    from ..pools.kinds import is_pool
    from ..pools.zoo import suites

    known = suites()
    found: list[str] = []
    for values in parameters.values():
        names = [values.get("suite")] + list(values.get("suites") or [])
        for name in names:
            if isinstance(name, str) and name in known and not is_pool(name) and name not in found:
                found.append(name)
    return found


def build_suites(parameters: dict[str, dict[str, Any]], log=print) -> list[dict]:
    """Build (or find built) every embedded suite the notebooks use, before any notebook runs, so that each build's
    time is its own row in the index rather than hidden inside the first notebook that opens the suite."""
    from ..pools.build import build_zoo
    from ..pools.zoo import suite_dir

    rows = []
    for suite in suites_used(parameters):
        ready = (suite_dir(suite) / "manifest.json").exists()
        log(f"[report] zoo {suite}: {'checking the cached build' if ready else 'building (cached afterwards)'}")
        start = time.perf_counter()
        row = {"suite": suite, "status": "ok", "cached": ready}
        try:
            build_zoo(suite, quiet=True, log=lambda msg: log(f"[report] zoo {suite}: {msg}"))
        except Exception as err:  # noqa: BLE001 - the notebooks that need it fail with their own message
            row.update(status="failed", error=_failure_message(err))
        row["seconds"] = time.perf_counter() - start
        log(f"[report] zoo {suite}: {row['status']} ({row['seconds']:.0f} s)")
        rows.append(row)
    return rows


def run_reports(options: Options) -> dict:
    """Execute the selected notebooks; returns the run record (``status`` is ``complete`` or ``failed``).

    Every parameter value is checked before anything runs (``ParameterError``). SIGINT (Ctrl-C) or SIGTERM stop the
    run: the notebook's kernel is killed, the temporary kernelspec folder removed, the run folder's ``run.json``
    marked ``interrupted`` (the index is left as it was), and ``RunInterrupted`` raised (one line from the CLI)."""
    state: dict[str, Any] = {"stage": "preparing the run"}
    with _signals_stop_the_run():
        try:
            return _run_reports(options, state)
        except (_Stop, KeyboardInterrupt) as stop:
            raise _interrupted(state, stop.signal_name if isinstance(stop, _Stop) else "SIGINT") from None


def _write_run(run_dir: Path, run: dict) -> None:
    atomic_write_text(run_dir / "run.json", json.dumps(run, indent=2, default=str))


def _interrupted(state: dict[str, Any], signal_name: str) -> RunInterrupted:
    """Record the stop in the run folder (if there is one yet) and say where it happened."""
    run, run_dir, stage = state.get("run"), state.get("run_dir"), state["stage"]
    if run is None or run_dir is None:
        return RunInterrupted(f"report interrupted by {signal_name} while {stage}; no run folder was written",
                              signal_name)
    if state.get("recorded"):  # every notebook ran and the run's status is final: it is kept
        return RunInterrupted(f"report run {run['id']} ({run['status']}) interrupted by {signal_name} while "
                              f"{stage}; its folder {run_dir} is complete, the index may still show the earlier run",
                              signal_name)
    row = state.get("row")
    if row is not None:  # the notebook that was running
        executed = run_dir / row["notebook"]
        run["reports"].append({**row, "status": "interrupted", "error": f"interrupted by {signal_name}",
                               "seconds": time.perf_counter() - state.get("row_start", time.perf_counter()),
                               "notebook": row["notebook"] if executed.exists() else None})
    run.update(status="interrupted", interrupted={"signal": signal_name, "while": stage},
               ended=time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    _write_run(run_dir, run)
    return RunInterrupted(f"report run {run['id']} interrupted by {signal_name} while {stage}; {run_dir} is marked "
                          "interrupted (the index is unchanged)", signal_name)


def _run_reports(options: Options, state: dict[str, Any]) -> dict:
    log = options.log
    notebooks = discover(options.notebooks, options.only)
    parameters = resolve_parameters(notebooks, options.notebooks / "parameters", options.smoke, options.overrides,
                                    options.profile)
    out = Path(options.out).absolute()  # papermill changes the working directory while a notebook runs
    runs_root = out / "runs"
    runs_root.mkdir(parents=True, exist_ok=True)
    mathjax = install_mathjax(out / "_static")
    sha = git_sha(dirty=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    mode = "smoke" if options.smoke else options.profile
    run_id = f"{stamp}-{sha[:7]}" + ("" if mode == "default" else f"-{mode}")
    run_dir = runs_root / run_id
    suffix = 1
    while run_dir.exists():  # two runs in one second: never reuse a folder
        suffix += 1
        run_dir = runs_root / f"{run_id}-{suffix}"
    _close_orphaned_runs(runs_root, log)
    _sweep_temporaries(log)
    run = {"id": run_dir.name, "mode": mode, "git_sha": sha, "claims_schema": CLAIMS_SCHEMA,
           "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "status": "running", "reports": [],
           "pid": os.getpid(), "host": socket.gethostname()}
    run_dir.mkdir()
    state.update(run=run, run_dir=run_dir, stage="creating the run folder")
    _write_run(run_dir, run)
    state["stage"] = "building the zoo suites"
    run["zoos"] = build_suites(parameters, log)
    _write_run(run_dir, run)
    state["stage"] = "starting the notebooks"
    with _project_kernel() as kernel:
        for notebook in notebooks:
            log(f"[report] {notebook.stem}: running with {parameters[notebook.stem] or 'its defaults'}")
            state.update(stage=f"running notebook {notebook.stem}", row_start=time.perf_counter(),
                         row={"name": notebook.stem, "notebook": f"{notebook.stem}.ipynb",
                              "parameters": parameters[notebook.stem]})
            row = run_one(notebook, parameters[notebook.stem], run_dir, mathjax, kernel)
            run["reports"].append(row)
            state.update(row=None, stage=f"recording notebook {notebook.stem}")
            _write_run(run_dir, run)
            outcome = "ok" if row["status"] == "ok" else f"FAILED: {row['error']}"
            log(f"[report] {notebook.stem}: {outcome} ({row['seconds']:.0f} s)")
        state["stage"] = "stopping the kernels"
    state["stage"] = "writing the index"
    run["status"] = "complete" if all(r["status"] == "ok" for r in run["reports"]) else "failed"
    _write_run(run_dir, run)
    state["recorded"] = True  # from here on an interruption leaves the run's status as it is
    earlier = _earlier_runs(runs_root, run["id"])
    write_index(run_dir / "index.html", run, "", [])
    others = _latest_elsewhere(runs_root, run["id"], {r["name"] for r in run["reports"]},
                               [n.stem for n in discover(options.notebooks)]) if options.only else []
    write_index(out / "index.html", run, f"runs/{run['id']}/", earlier, others, documents_in(out))
    log(f"[report] wrote {out / 'index.html'} (run folder {run_dir})")
    if options.publish:
        if run["status"] != "complete" or mode != "default" or options.only or options.overrides:
            log("[report] not published: only a complete run of every notebook at default parameters is")
        else:
            state["stage"] = "publishing"
            publish(run, run_dir, out / "published")
            log(f"[report] published to {out / 'published'}")
    return run


def publish(run: dict, run_dir: Path, target: Path) -> Path:
    """Copy a run's pages (index, every notebook's HTML and executed notebook, metrics.json, run.json) into
    ``target``, replacing what was there only once the copy is complete. ``target`` is self-contained: it carries
    its own copy of MathJax (``_static/mathjax``, about 12 MB), and the pages point at it, so a fresh clone shows
    the published formulas offline before anything is installed."""
    import shutil

    staging = target.with_name(f".{target.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    install_mathjax(staging / "_static")
    for row in run["reports"]:
        name = row["name"]
        if row.get("html"):
            page = (run_dir / row["html"]).read_text(encoding="utf-8")
            page = page.replace("../../_static/mathjax/", "_static/mathjax/").replace('href="../../index.html"',
                                                                                      'href="index.html"')
            (staging / row["html"]).write_text(page, encoding="utf-8")
        if (run_dir / row["notebook"]).exists():
            shutil.copy2(run_dir / row["notebook"], staging / row["notebook"])
        if (run_dir / name / "metrics.json").exists():
            (staging / name).mkdir()
            shutil.copy2(run_dir / name / "metrics.json", staging / name / "metrics.json")
    atomic_write_text(staging / "run.json", json.dumps(run, indent=2, default=str))
    write_index(staging / "index.html", run, "", [], documents=documents_in(target.parent, "../"))
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(staging, target)
    shutil.rmtree(old, ignore_errors=True)
    return target
