"""``nbmerge report``: parameter layering, failure handling, the index, offline HTML in a real browser."""

import json
import sys
from pathlib import Path

import nbformat
import pytest

from nbmerge.cli import main
from nbmerge.errors import NbmergeError
from nbmerge.report.browser import check_pages, page_problems, visit
from nbmerge.report.pipeline import Options, discover, notebook_parameters, parse_value, resolve_parameters, run_reports

REPO = Path(__file__).resolve().parents[1]

GOOD_CELLS = [
    ("markdown", r"# A good report" "\n\nInline math $\\tau_t = \\theta_t - \\theta_0$ and display $$\\sum_t \\tau_t.$$"),
    ("parameters", 'scale = 2.0\nsmoke = False\nlabel = "x"'),
    ("code", "%matplotlib inline\nimport matplotlib.pyplot as plt\nfrom nbmerge.experiments.common import figure\n"
             "fig, ax = plt.subplots()\nax.plot([0, 1], [0, scale])\n"
             "figure(fig, 'a straight line from (0, 0) to (1, scale): the scale parameter as a slope')"),
    ("code", "from nbmerge.experiments.common import claim, finish\n"
             "from nbmerge.evaluate.verdicts import decide\n"
             "claims = [claim('twice one is two', 'arithmetic', decide(2.0, interval=[1.5, 2.5], threshold=1.0),\n"
             "                'computed', id='X1'),\n"
             "          claim('the answer is untested', 'nowhere', None, 'no data', id='X2')]\n"
             "finish('good', headline={'name': 'scaled', 'value': scale * 21, 'format': '{:.1f}'},\n"
             "       metrics={'value': scale * 21, 'smoke': smoke}, claims=claims, config={'scale': scale})"),
]
BAD_CELLS = [
    ("parameters", "smoke = False"),
    ("code", "x = 1"),
    ("code", "raise ValueError('the data went missing')"),
    ("code", "print('never reached')"),
]


def write_notebook(path: Path, cells) -> Path:
    nb = nbformat.v4.new_notebook()
    for kind, source in cells:
        if kind == "markdown":
            nb.cells.append(nbformat.v4.new_markdown_cell(source))
        else:
            cell = nbformat.v4.new_code_cell(source)
            if kind == "parameters":
                cell.metadata["tags"] = ["parameters"]
            nb.cells.append(cell)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


@pytest.fixture
def book(tmp_path):
    """A notebook folder with a good and a failing notebook and two parameter layers."""
    folder = tmp_path / "notebooks"
    write_notebook(folder / "good.ipynb", GOOD_CELLS)
    write_notebook(folder / "zz_bad.ipynb", BAD_CELLS)
    (folder / "parameters").mkdir()
    (folder / "parameters" / "default.yaml").write_text("all:\n  smoke: false\ngood:\n  scale: 3.0\n")
    (folder / "parameters" / "smoke.yaml").write_text("all:\n  smoke: true\ngood:\n  label: smoky\n")
    return folder


# ----------------------------------------------------------------------------------------------- parameters (fast)

def test_parameter_layers_last_wins(book):
    notebooks = discover(book)
    assert [p.stem for p in notebooks] == ["good", "zz_bad"]
    assert notebook_parameters(book / "good.ipynb") == {"scale": 2.0, "smoke": False, "label": "x"}
    default = resolve_parameters(notebooks, book / "parameters", smoke=False, overrides={})
    assert default == {"good": {"smoke": False, "scale": 3.0}, "zz_bad": {"smoke": False}}
    smoke = resolve_parameters(notebooks, book / "parameters", smoke=True, overrides={"scale": 5})
    assert smoke["good"] == {"smoke": True, "scale": 5, "label": "smoky"}
    assert smoke["zz_bad"] == {"smoke": True}  # `scale` is not one of its parameters: not injected


def test_parameter_errors_are_clear(book):
    notebooks = discover(book)
    with pytest.raises(NbmergeError, match="no notebook has such a parameter"):
        resolve_parameters(notebooks, book / "parameters", False, {"nonsense": 1})
    # a parameter of another notebook of the folder is fine with --only (it applies where it is declared)
    only_bad = discover(book, ("zz_bad",))
    assert resolve_parameters(only_bad, book / "parameters", False, {"scale": 5.0}) == {"zz_bad": {"smoke": False}}
    with pytest.raises(NbmergeError, match="'scale' is float"):
        resolve_parameters(notebooks, book / "parameters", False, {"scale": "big"})
    with pytest.raises(NbmergeError, match="'smoke' is bool"):
        resolve_parameters(notebooks, book / "parameters", False, {"smoke": 1})
    (book / "parameters" / "default.yaml").write_text("good:\n  colour: red\n")
    with pytest.raises(NbmergeError, match="has no parameter 'colour'"):
        resolve_parameters(notebooks, book / "parameters", False, {})
    (book / "parameters" / "default.yaml").write_text("missing_notebook:\n  smoke: true\n")
    with pytest.raises(NbmergeError, match="no notebook named missing_notebook"):
        resolve_parameters(notebooks, book / "parameters", False, {})
    with pytest.raises(NbmergeError, match="--only: no notebook named nope"):
        discover(book, ("nope",))
    write_notebook(book / "noparams.ipynb", [("code", "x = 1")])
    with pytest.raises(NbmergeError, match="exactly one cell tagged `parameters`"):
        notebook_parameters(book / "noparams.ipynb")


def test_a_parameters_cell_is_read_without_running_it(tmp_path):
    """`nbmerge report --dry-run` used to exec each notebook's parameters cell inside the nbmerge process."""
    marker = tmp_path / "ran"
    for source in (f"x = 1\nopen({str(marker)!r}, 'w').close()", f"x = __import__('os').system('touch {marker}')",
                   "import os\nx = 1"):
        write_notebook(tmp_path / "nb.ipynb", [("parameters", source), ("code", "x")])
        with pytest.raises(NbmergeError, match="literal assignments only"):
            notebook_parameters(tmp_path / "nb.ipynb")
    assert not marker.exists()
    write_notebook(tmp_path / "nb.ipynb", [("parameters", '"""doc"""\na: int = -1\nb = [0.5, "x"]  # why\nc = None')])
    assert notebook_parameters(tmp_path / "nb.ipynb") == {"a": -1, "b": [0.5, "x"], "c": None}


def test_cli_values_read_as_yaml():
    assert parse_value("3") == 3 and parse_value("0.5") == 0.5 and parse_value("true") is True
    assert parse_value("[tsv, ties]") == ["tsv", "ties"] and parse_value("tiny8") == "tiny8"
    # papermill writes parameters as Python source: only plain values (a !!binary payload used to reach the kernel)
    for tagged in ("!!binary aW1wb3J0IG9z", "2026-12-05", "!!set {a: null}", "[1, !!binary aW1w]"):
        with pytest.raises(NbmergeError, match="parameters are text, numbers"):
            parse_value(tagged)
    assert parse_value("'2026-12-05'") == "2026-12-05"


def test_the_default_profile_is_each_notebooks_own_parameters_cell():
    """Run All in JupyterLab is the published run: every value notebooks/parameters/default.yaml sets is already the
    notebook's own default, so the report injects nothing and a warm trial cache serves the interactive run too."""
    import yaml

    shipped = REPO / "notebooks"
    profile = yaml.safe_load((shipped / "parameters" / "default.yaml").read_text())
    differ = {}
    for path in discover(shipped):
        declared = notebook_parameters(path)
        wanted = {k: v for k, v in profile.get("all", {}).items() if k in declared} | profile.get(path.stem, {})
        differ.update({f"{path.stem}.{k}": (declared[k], v) for k, v in wanted.items() if declared[k] != v})
    assert not differ, f"notebook default -> default.yaml: {differ}"


# ------------------------------------------------------------------------------------------ a run, with a failure

@pytest.fixture
def runs(book, tmp_path):
    """Two runs of the small book: the first default, the second smoke and only the good notebook."""
    out = tmp_path / "reports"
    code = main(["report", "--notebooks", str(book), "--out", str(out), "-p", "scale", "4"])
    first = json.loads(next((out / "runs").glob("*/run.json")).read_text())
    second = run_reports(Options(notebooks=book, out=out, smoke=True, only=("good",), log=lambda *_: None))
    return out, code, first, second


def test_failed_notebook_is_reported_and_others_still_run(runs):
    out, code, first, _ = runs
    assert code == 1 and first["status"] == "failed"
    good, bad = first["reports"]
    assert good["status"] == "ok" and good["parameters"] == {"smoke": False, "scale": 4}
    assert good["headline"]["value"] == 84.0
    assert [c["verdict"] for c in good["claims"]] == ["held", "not tested"]
    assert bad["status"] == "failed" and "ValueError: the data went missing" in bad["error"]
    run_dir = out / "runs" / first["id"]
    partial = nbformat.read(str(run_dir / "zz_bad.ipynb"), as_version=4)  # the partially executed copy is kept
    outputs = [o for c in partial.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert any(o.get("ename") == "ValueError" for o in outputs)
    assert (run_dir / "zz_bad.html").exists() and (run_dir / "good.html").exists()
    metrics = json.loads((run_dir / "good" / "metrics.json").read_text())
    assert metrics["metrics"] == {"value": 84.0, "smoke": False} and metrics["fingerprint"]["git_sha"]
    # only what differs from a notebook's own parameters cell is injected (smoke=False is good's default)
    def injected(name):
        book = nbformat.read(str(run_dir / f"{name}.ipynb"), as_version=4)
        return [c.source for c in book.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected("zz_bad") == [] and len(injected("good")) == 1
    assert "scale = 4" in injected("good")[0] and "smoke" not in injected("good")[0]


def test_each_run_gets_a_fresh_folder_and_the_index_links_the_latest(runs):
    out, _, first, second = runs
    assert second["status"] == "complete" and first["id"] != second["id"]
    assert second["claims_schema"] == 2 and second["reports"][0]["claims"][0]["outcome"] == "held"
    assert second["reports"][0]["parameters"] == {"smoke": True, "scale": 3.0, "label": "smoky"}
    assert (out / "runs" / first["id"] / "good.html").exists()  # the earlier run is untouched
    index = (out / "index.html").read_text()
    assert f'runs/{second["id"]}/good.html' in index and f'runs/{first["id"]}/index.html' in index
    assert "twice one is two" in index and "scaled: <b>63.0</b>" in index
    assert (out / "runs" / first["id"] / "index.html").exists()


def test_reports_render_offline_in_a_real_browser(runs, tmp_path):
    out, _, _, second = runs
    page = out / "runs" / second["id"] / "good.html"
    shot = tmp_path / "good.png"
    result = visit(page, screenshot=shot)
    assert result.network_requests == [], result.network_requests
    assert result.math == "typeset" and result.facts["math_elements"] >= 2 and result.facts["raw_tex"] == []
    assert result.facts["images"] >= 1 and result.facts["images_decoded"] == result.facts["images"]
    assert shot.stat().st_size > 10_000
    index = visit(out / "index.html", screenshot=tmp_path / "index.png")
    assert index.network_requests == [] and f'runs/{second["id"]}/good.html' in index.facts["links"]


def test_browser_check_fails_a_figure_without_alt_text(runs, tmp_path):
    """Every figure says what it shows: the rendered page carries the alt text, and a page whose image has none (or
    nbconvert's placeholder) is a problem of the page."""
    out, _, _, second = runs
    page = out / "runs" / second["id"] / "good.html"
    assert "the scale parameter as a slope" in page.read_text()
    assert not [p for p in page_problems(visit(page)) if "alt text" in p]
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
    bare = tmp_path / "bare.html"
    bare.write_text(f'<html><body><img src="data:image/png;base64,{pixel}">'
                    f'<img src="data:image/png;base64,{pixel}" alt="No description has been provided for this image">'
                    "</body></html>")
    assert any("2 of 2 figures have no alt text" in p for p in page_problems(visit(bare)))


def test_math_renders_with_its_shipped_font_and_fails_without_it(tmp_path):
    """Every file MathJax asks for ships with the pages (the STIX-Web font: accents, script and blackboard letters,
    large operators); the check fails a page that asks for a missing file, e.g. after one font file is removed."""
    import shutil

    from nbmerge.report.html import install_mathjax, render_notebook

    book = write_notebook(tmp_path / "formula.ipynb", [("markdown", r"# Formulas" "\n\n" r"$\hat{\theta} = \theta_0 + "
                          r"\alpha \sum_{t=1}^{T} \tau_t$ and $$\mathcal{L} = \mathbb{E}_{x}\Big[\tilde{\ell}\Big]$$")])
    mathjax = install_mathjax(tmp_path / "_static")
    page = render_notebook(book, tmp_path / "formula.html", mathjax)
    shown = visit(page)
    assert shown.math == "typeset" and shown.facts["math_elements"] >= 2
    assert page_problems(shown) == [] and shown.failed == [] and shown.facts["math_fallback"] == ""
    assert any("STIX-Web/woff" in r for r in shown.requests)
    font = next((mathjax / "fonts" / "HTML-CSS" / "STIX-Web" / "woff").glob("STIXMathJax_Main-Regular*"))
    shutil.move(font, tmp_path / font.name)   # the negative control
    problems = page_problems(visit(page))
    assert any("did not load" in p and "STIXMathJax_Main-Regular" in p for p in problems), problems


def test_run_all_in_jupyterlab_computes_what_the_report_published(runs, book):
    """Run All in a real JupyterLab page (headless Chromium) on the notebook as shipped, compared with the report's
    run at the same parameters: the same claims, outcomes and numbers; a changed number is caught."""
    from nbmerge.report.lab import compare, run_all

    out, _, _, _ = runs
    lab = run_all(book / "good.ipynb", timeout=300, log=lambda *_: None)
    assert lab.ok and lab.errors == [] and lab.executed == lab.cells and lab.metrics is not None
    (book / "parameters" / "default.yaml").write_text("all:\n  smoke: false\n")   # the notebook's own defaults
    code = main(["report", "--notebooks", str(book), "--out", str(out / "plain"), "--only", "good"])
    assert code == 0
    published = json.loads(next((out / "plain" / "runs").glob("*/good/metrics.json")).read_text())
    assert compare(published, lab.metrics) == []
    changed = json.loads(json.dumps(lab.metrics))
    changed["claims"][0]["interval"] = [1.4, 2.5]
    changed["claims"][1]["outcome"] = "held"
    assert compare(published, changed) == ["X1: interval published [1.5, 2.5], lab [1.4, 2.5]",
                                           "X2: outcome published 'not tested', lab 'held'"]


def test_two_reports_starting_into_one_fresh_folder_both_get_mathjax(tmp_path):
    """Two first runs into one fresh --out used to collide on one staging folder (FileExistsError)."""
    import threading

    from nbmerge.report.html import install_mathjax

    errors, threads = [], []
    for _ in range(3):
        def copy():
            try:
                install_mathjax(tmp_path / "_static")
            except Exception as exc:  # noqa: BLE001 - collected for the assertion
                errors.append(exc)
        threads.append(threading.Thread(target=copy))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and (tmp_path / "_static" / "mathjax" / ".complete").exists()
    assert sorted(p.name for p in (tmp_path / "_static").iterdir()) == ["mathjax"]   # no staging left behind


def test_browser_check_sees_network_requests(tmp_path):
    """The no-network assertion can fail: a page that loads a remote script is caught."""
    page = tmp_path / "remote.html"
    page.write_text('<html><body><p>$x$</p><script src="http://example.invalid/x.js"></script></body></html>')
    result = visit(page)
    assert any(u.startswith("http://example.invalid") for u in result.network_requests)
    assert result.math == "no-mathjax" and result.facts["raw_tex"] == ["$x$"]


# ------------------------------------------------------------------------------------------- the real notebooks

def test_notebooks_follow_the_conventions():
    for path in discover(REPO / "notebooks"):
        nb = nbformat.read(str(path), as_version=4)
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells
                   if c.cell_type == "code"), f"{path.name} is committed with outputs"
        params = notebook_parameters(path)
        assert {"suite", "device", "seed", "smoke"} <= set(params), path.name
        assert "finish(" in nb.cells[-1].source, f"{path.name}: the last cell must write metrics.json"
        assert nb.metadata.kernelspec.name == "nbmerge", f"{path.name} must open on the project's kernel"
    resolve_parameters(discover(REPO / "notebooks"), REPO / "notebooks" / "parameters", True, {})


def test_report_check_opens_every_page(book, tmp_path, capsys):
    """`nbmerge report --check` (what CI runs on the real notebooks with --smoke) checks every page in Chromium."""
    out = tmp_path / "reports"
    assert main(["report", "--notebooks", str(book), "--out", str(out), "--only", "good", "--check"]) == 0
    assert "2 pages render offline" in capsys.readouterr().out  # the index and one report
    run_dir = next((out / "runs").glob("*"))
    assert sorted(p.name for p in (run_dir / "screenshots").iterdir()) == ["good.png", "index.png"]
    page = run_dir / "good.html"
    page.write_text(page.read_text().replace("</body>", '<img src="https://example.invalid/x.png"></body>'))
    problems = check_pages([page])[str(page)]
    assert any("leaving the machine" in p for p in problems) and any("did not load" in p for p in problems)
    # negative control: a TeX error (what `W^\*` gave in the tour) renders as a red box, and the check fails
    bad = run_dir / "bad_tex.html"
    bad.write_text((run_dir / "good.html").read_text().replace("</body>", r"<p>$W^\* = 1$</p></body>"))
    problems = check_pages([bad])[str(bad)]
    assert any(p.startswith("TeX errors") for p in problems), problems


EVIL = "alpha<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"
EVIL_CELLS = [
    ("parameters", 'smoke = False\nlabel = "x"'),
    ("code", "from nbmerge.experiments.common import claim, finish, table\n"
             "from nbmerge.evaluate.verdicts import decide\n"
             "display(table([{'expert': label, 'accuracy': 0.5}], caption=f'experts of {label}'))\n"
             "claims = [claim(f'{label} beats the base', label, decide(1.0, interval=[0.5, 1.5], threshold=0.0),\n"
             "                label, id='E1')]\n"
             "finish('evil', headline={'name': label, 'value': 1.0, 'format': '{:.1f}'},\n"
             "       metrics={'label': label}, claims=claims, config={'label': label})"),
]


def test_names_that_are_html_reach_no_page_as_markup(tmp_path, capsys):
    """A task, expert or parameter name that is HTML (an expert folder named `alpha<img onerror=...>`) is shown as
    text on the notebook's page and on the index, and the browser check would fail a page that ran script the
    report did not ship (negative control below)."""
    folder = tmp_path / "notebooks"
    write_notebook(folder / "evil.ipynb", EVIL_CELLS)
    out = tmp_path / "reports"
    assert main(["report", "--notebooks", str(folder), "--out", str(out), "--check", "-p", "label", EVIL]) == 0
    assert "2 pages render offline" in capsys.readouterr().out
    run_dir = next((out / "runs").glob("*"))
    for page in (run_dir / "evil.html", run_dir / "index.html"):
        text = page.read_text()
        assert "<img src=x" not in text and "<script>document.title" not in text, page.name
        assert visit(page).facts["title"] != "pwned"
    assert "alpha&lt;img src=x" in (run_dir / "evil.html").read_text()
    assert "alpha&lt;img src=x" in (run_dir / "index.html").read_text()
    # negative control: the same page with the name written as HTML runs script, and the check says so
    for live in ('<img src=x onerror="document.title=1">', "<script>document.title=1</script>",
                 '<a href="javascript:alert(1)">x</a>'):
        bad = run_dir / "live.html"
        bad.write_text((run_dir / "evil.html").read_text().replace("</body>", live + "</body>"))
        problems = check_pages([bad])[str(bad)]
        assert any("scripts the report did not ship" in p for p in problems), (live, problems)


def test_the_set_up_registers_the_kernel_the_notebooks_name():
    """`make setup` registers the `nbmerge` kernelspec inside the venv, on this interpreter: the notebooks open on it
    in JupyterLab and under a plain `papermill` from the venv."""
    spec = Path(sys.prefix) / "share" / "jupyter" / "kernels" / "nbmerge" / "kernel.json"
    if Path(sys.prefix).name != ".venv":
        pytest.skip("not running from the project's venv")
    argv = json.loads(spec.read_text())["argv"]
    assert Path(argv[0]).resolve() == Path(sys.executable).resolve()


def _signals_sent_at_shutdown(manager_class) -> list:
    """Start a real kernel under ``manager_class``, shut it down normally, and return every signal sent to it."""
    import asyncio

    sent = []

    async def go():
        manager = manager_class(kernel_name="python3")
        await manager.start_kernel()
        original = manager._async_signal_kernel

        async def spy(signum):
            sent.append(signum)
            await original(signum)

        manager._async_signal_kernel = spy
        client = manager.client()
        client.start_channels()
        await client.wait_for_ready(timeout=60)
        client.stop_channels()
        await manager.shutdown_kernel()
        assert not await manager.is_alive()

    asyncio.run(go())
    return sent


def test_a_reports_kernel_shuts_down_without_an_interrupt():
    """jupyter_client sends SIGINT before every shutdown; a kernel still in a message handler then logs
    "KeyboardInterrupt caught in kernel" to stderr after a run that succeeded. The report's manager does not."""
    import signal

    from jupyter_client import AsyncKernelManager

    from nbmerge.report.pipeline import _kernel_manager_class

    assert signal.SIGINT in _signals_sent_at_shutdown(AsyncKernelManager)  # the control: the stock manager does
    assert signal.SIGINT not in _signals_sent_at_shutdown(_kernel_manager_class())
