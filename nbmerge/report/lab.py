"""Run All in JupyterLab, driven in headless Chromium, and compared with the published page.

The published pages come from papermill; a user opens the same notebook in JupyterLab and presses Run All. This
module does exactly that: it starts a JupyterLab server on a copy of the notebook (``--LabApp.expose_app_in_browser``
so the page's own command registry can be driven), opens the notebook in headless Chromium, runs the
``notebook:run-all-cells`` command, waits for the kernel, saves, and reads the ``metrics.json`` the notebook's last
cell wrote. :func:`compare` then lists every claim whose outcome or numbers differ from the published run's.

Nothing leaves the machine: the server listens on 127.0.0.1 with a random token, and the kernel is the one the
notebook names (``nbmerge``, registered by ``make setup``). The trial cache is shared with ``nbmerge report``, so a
notebook whose parameters cell equals the default profile recomputes nothing that the published run computed.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import NbmergeError
from .browser import chromium_pipe, evaluate, open_page

# JavaScript run in the JupyterLab page. `jupyterapp` is the application object the server exposes.
_READY = """(async () => {
  for (let i = 0; i < 1200 && !window.jupyterapp; i++) await new Promise(r => setTimeout(r, 100));
  if (!window.jupyterapp) return 'no jupyterapp (is expose_app_in_browser set?)';
  await window.jupyterapp.restored;
  for (let i = 0; i < 600; i++) {
    const w = window.jupyterapp.shell.currentWidget;
    if (w && w.context && w.sessionContext && w.content && w.content.widgets) {
      await w.context.ready; await w.sessionContext.ready;
      if (w.sessionContext.session && w.sessionContext.session.kernel) return w.context.path;
    }
    await new Promise(r => setTimeout(r, 100));
  }
  return '';
})()"""
_START = """(() => {
  window.__nbmerge_done = null;
  window.jupyterapp.commands.execute('notebook:run-all-cells').then(
    ok => { window.__nbmerge_done = {ok: ok === undefined ? true : !!ok}; },
    err => { window.__nbmerge_done = {ok: false, error: String(err)}; });
  return true;
})()"""
_STATE = """(() => {
  const w = window.jupyterapp.shell.currentWidget;
  const cells = w.content.widgets.filter(c => c.model.type === 'code');
  const errors = [];
  for (const c of cells) {
    for (const o of c.model.outputs.toJSON()) {
      if (o.output_type === 'error') errors.push(o.ename + ': ' + String(o.evalue).slice(0, 200));
    }
  }
  return JSON.stringify({done: window.__nbmerge_done, kernel: w.sessionContext.session.kernel.status,
                         executed: cells.filter(c => c.model.executionCount !== null).length,
                         cells: cells.length, errors: errors});
})()"""
_SAVE = "window.jupyterapp.commands.execute('docmanager:save').then(() => true)"


@dataclass
class LabRun:
    notebook: str
    seconds: float
    ok: bool
    executed: int = 0
    cells: int = 0
    errors: list = field(default_factory=list)
    metrics: Optional[dict] = None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_server(url: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise NbmergeError(f"JupyterLab exited while starting (code {proc.returncode})")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise NbmergeError(f"JupyterLab did not answer at {url} within {timeout:.0f} s")


def run_all(notebook: Path, timeout: float = 3600.0, log=print) -> LabRun:
    """Press Run All on a copy of ``notebook`` in JupyterLab (headless Chromium) and return what it computed."""
    notebook = Path(notebook).resolve()
    jupyter = Path(sys.executable).with_name("jupyter")
    if not jupyter.exists():
        raise NbmergeError(f"JupyterLab is not installed next to {sys.executable} (run `make setup`)")
    with tempfile.TemporaryDirectory(prefix="nbmerge-lab-") as root:
        work = Path(root) / "notebooks"
        work.mkdir()
        shutil.copy2(notebook, work / notebook.name)
        port, token = _free_port(), secrets.token_hex(16)
        env = {**os.environ, "JUPYTER_CONFIG_DIR": str(Path(root) / "config"),
               "JUPYTER_RUNTIME_DIR": str(Path(root) / "runtime"), "HF_HUB_OFFLINE": "1"}
        server = subprocess.Popen(
            [str(jupyter), "lab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
             "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
             "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=", "--LabApp.check_for_updates_class="
             "jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly",
             *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])],
            cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=open(Path(root) / "server.log", "w"))
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_for_server(f"{base}/api?token={token}", server, 60)
            with chromium_pipe(1400, 1000) as pipe:
                session = open_page(pipe, f"{base}/lab/tree/{notebook.name}?token={token}", timeout=120)
                opened = evaluate(pipe, session, _READY, timeout=180, await_promise=True)
                if opened != notebook.name:
                    raise NbmergeError(f"JupyterLab did not open {notebook.name} with a kernel ({opened or 'timeout'})")
                start = time.perf_counter()
                evaluate(pipe, session, _START)
                deadline = time.monotonic() + timeout
                state: dict = {}
                while time.monotonic() < deadline:
                    time.sleep(2)
                    state = json.loads(evaluate(pipe, session, _STATE))
                    if state["done"] is not None and state["kernel"] == "idle":
                        break
                else:
                    raise NbmergeError(f"Run All on {notebook.name} did not finish within {timeout:.0f} s "
                                       f"({state.get('executed')} of {state.get('cells')} cells ran)")
                seconds = time.perf_counter() - start
                evaluate(pipe, session, _SAVE, timeout=60, await_promise=True)
            metrics_path = work / "metrics.json"
            metrics = json.loads(metrics_path.read_text()) if metrics_path.exists() else None
            run = LabRun(notebook.name, seconds, bool(state["done"].get("ok")) and not state["errors"],
                         state["executed"], state["cells"], state["errors"], metrics)
            log(f"[lab] {notebook.name}: Run All {'ok' if run.ok else 'FAILED'} in {seconds:.0f} s "
                f"({run.executed} of {run.cells} code cells ran)" + (f"; {run.errors[0]}" if run.errors else ""))
            return run
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _same(a, b, rel: float = 1e-9) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return a == b or (math.isfinite(a) and math.isfinite(b) and abs(a - b) <= rel * max(abs(a), abs(b)))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y, rel) for x, y in zip(a, b))
    return a == b


NUMBERS = ("estimate", "interval", "threshold", "effect", "mde", "p")


def compare(published: dict, lab: dict) -> list[str]:
    """Every difference between two ``metrics.json`` of one notebook: the headline, and per claim its outcome and
    numbers (``estimate``, ``interval``, ``threshold``, ``effect``, ``mde``, ``p``). Empty when they agree."""
    out = []
    head_a, head_b = published.get("headline") or {}, lab.get("headline") or {}
    if not _same(head_a.get("value"), head_b.get("value")):
        out.append(f"headline {head_a.get('name', '')!r}: published {head_a.get('value')}, lab {head_b.get('value')}")
    claims_a = {c.get("id"): c for c in published.get("claims", [])}
    claims_b = {c.get("id"): c for c in lab.get("claims", [])}
    for cid in sorted(set(claims_a) | set(claims_b), key=str):
        a, b = claims_a.get(cid), claims_b.get(cid)
        if a is None or b is None:
            out.append(f"{cid}: only in the {'lab run' if a is None else 'published run'}")
            continue
        if a.get("outcome", a.get("verdict")) != b.get("outcome", b.get("verdict")):
            out.append(f"{cid}: outcome published {a.get('outcome', a.get('verdict'))!r}, lab "
                       f"{b.get('outcome', b.get('verdict'))!r}")
        for key in NUMBERS:
            if not _same(a.get(key), b.get(key)):
                out.append(f"{cid}: {key} published {a.get(key)}, lab {b.get(key)}")
    return out


def main(argv: Optional[list[str]] = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m nbmerge.report.lab", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", help="notebooks to run (default: every numbered one in notebooks/)")
    parser.add_argument("--published", default="reports/published", help="the published run to compare with")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per notebook")
    parser.add_argument("--out", default=None, help="write the comparison as JSON here")
    args = parser.parse_args(argv)
    paths = [Path(p) for p in args.notebooks] or sorted(Path("notebooks").glob("[0-9][0-9]_*.ipynb"))
    results, failed = {}, False
    for path in paths:
        run = run_all(path, timeout=args.timeout)
        published = Path(args.published) / path.stem / "metrics.json"
        differences = (compare(json.loads(published.read_text()), run.metrics) if run.metrics and published.exists()
                       else ["no metrics.json from the lab run" if not run.metrics else f"no {published}"])
        for line in differences:
            print(f"[lab] {path.stem}: {line}")
        if not differences:
            print(f"[lab] {path.stem}: every claim's outcome and numbers equal the published page's")
        results[path.stem] = {"seconds": round(run.seconds, 1), "ok": run.ok, "errors": run.errors,
                              "differences": differences}
        failed |= not run.ok
    if args.out:
        from ..engine.io import atomic_write_text

        atomic_write_text(args.out, json.dumps(results, indent=2) + "\n")
        atomic_write_text(Path(args.out).with_suffix(".md"), render(results, args.published))
    return 1 if failed else 0


def render(results: dict, published: str) -> str:
    """The comparison as a Markdown table: per notebook, Run All's time, whether it ran clean, and what differs."""
    lines = ["| notebook | Run All | cells ran clean | differences from the published page |", "|---|---|---|---|"]
    for stem, row in results.items():
        diff = "none" if not row["differences"] else "<br>".join(row["differences"])
        lines.append(f"| {stem} | {row['seconds']:.0f} s | {'yes' if row['ok'] else 'no: ' + '; '.join(row['errors'])} "
                     f"| {diff} |")
    return (f"Run All in JupyterLab (headless Chromium), compared with `{published}`: "
            f"`python -m nbmerge.report.lab --out <file>.json`.\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
