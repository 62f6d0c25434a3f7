"""Offline HTML: executed notebooks rendered with a bundled MathJax, and the index of a report run.

nbconvert's HTML points at CDNs for MathJax, require.js, jQuery and mermaid (docs/environment.md). We point
MathJax at the copy shipped by ``jupyter-server-mathjax`` (MathJax 2.7, copied once next to the reports) and drop
the other remote scripts, which a report never needs: an executed notebook's figures are embedded PNGs.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Optional, Sequence

from ..errors import NbmergeError
from ..evaluate.claims import VERDICTS
from ..engine.io import atomic_write_text

# nbconvert's default config name (TeX-AMS_CHTML-full) is not in the jupyter-server-mathjax bundle.
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"

# The bundle ships one web font, STIX-Web (woff files and their metrics); MathJax's default TeX font is absent, so
# without this the pages ask for files that are not there and draw formulas with whatever fonts the system has
# (accents off their letters, small operators). The browser check fails a page that requests a missing file.
MATHJAX_FONTS = ('"HTML-CSS": {availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null},\n'
                 '                ')
_MATHJAX_CONFIG_CALL = "MathJax.Hub.Config({"
# The hidden MathML copy each formula carries for screen readers picks the TeX fonts by `mathvariant` (\mathcal,
# \mathbb), which are not shipped: it inherits the page's font instead (it is never seen).
_ASSISTIVE_CSS = "<style>.MJX_Assistive_MathML [mathvariant] { font-family: inherit !important; }</style>\n"

_EMPTY_SCRIPT = re.compile(r'<script src=""></script>')
# The mermaid loader is a module script that imports from a CDN when the page has a diagram; ours never do.
_MERMAID = re.compile(r'<script type="module">(?:(?!</script>).)*jp-Mermaid(?:(?!</script>).)*</script>', re.S)
_REMOTE = re.compile(r'(?:src|href)="(https?:)?//', re.I)


def install_mathjax(static_dir: Path) -> Path:
    """Copy MathJax 2.7 from the ``jupyter-server-mathjax`` package into ``static_dir/mathjax`` (once)."""
    try:
        import jupyter_server_mathjax
    except ImportError as err:  # a project dependency: only a broken install gets here
        raise NbmergeError("jupyter-server-mathjax is not installed (run `make setup`)") from err
    source = Path(jupyter_server_mathjax.__file__).parent / "static"
    target = static_dir / "mathjax"
    marker = target / ".complete"
    if marker.exists():
        return target
    # a private staging folder: two reports starting into one fresh --out both copy, and the first rename wins
    static_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".mathjax.", suffix=".partial", dir=static_dir))
    try:
        shutil.copytree(source, staging, dirs_exist_ok=True)
        (staging / ".complete").write_text("copied from jupyter-server-mathjax\n")
        if marker.exists():  # another run finished its copy meanwhile
            return target
        shutil.rmtree(target, ignore_errors=True)  # an incomplete copy (no marker) from an interrupted run
        try:
            os.replace(staging, target)
        except OSError:
            if not marker.exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def notebook_title(nb, fallback: str) -> str:
    """The notebook's first Markdown heading (its title), or ``fallback``."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return re.sub(r"[*_`$]", "", line.lstrip("#").strip()) or fallback
    return fallback


def render_notebook(notebook_path: Path, html_path: Path, mathjax_dir: Path, index_path: Optional[Path] = None) -> Path:
    """Render an executed notebook to a self-contained HTML file that makes no network request, titled by the
    notebook's first heading, with a link back to ``index_path`` (the reports' index) at the top."""
    import nbformat
    from nbconvert import HTMLExporter

    relative = os.path.relpath(mathjax_dir / "MathJax.js", html_path.parent)
    exporter = HTMLExporter(mathjax_url=f"{Path(relative).as_posix()}?config={MATHJAX_CONFIG}", require_js_url="",
                            jquery_url="", mermaid_js_url="", embed_images=True)
    nb = nbformat.read(str(notebook_path), as_version=4)
    title = notebook_title(nb, notebook_path.stem)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    body = _MERMAID.sub("", _EMPTY_SCRIPT.sub("", body))
    if body.count(_MATHJAX_CONFIG_CALL) != 1:  # a new nbconvert template: the font setting would silently be lost
        raise NbmergeError(f"{html_path.name}: expected one MathJax configuration in the rendered page, found "
                           f"{body.count(_MATHJAX_CONFIG_CALL)}")
    body = body.replace(_MATHJAX_CONFIG_CALL, _MATHJAX_CONFIG_CALL + "\n                " + MATHJAX_FONTS, 1)
    body = body.replace("</head>", _ASSISTIVE_CSS + "</head>", 1)
    if index_path is not None:
        href = Path(os.path.relpath(index_path, html_path.parent)).as_posix()
        nav = (f'<nav class="nbmerge-nav" style="font-family: system-ui, sans-serif; margin: 0.5em 1em;">'
               f'<a href="{_esc(href)}">← all reports</a> · {_esc(notebook_path.stem)}</nav>')
        body = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + nav, body, count=1)
    remote = _REMOTE.findall(body)
    if remote:  # a new nbconvert template with another CDN reference would otherwise slip through
        raise NbmergeError(f"{html_path.name}: the rendered HTML still references remote resources")
    atomic_write_text(html_path, body)
    return html_path


# ---------------------------------------------------------------------------------------------------------------- index

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; width: 100%; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.4em 0.6em; vertical-align: top; text-align: left; }
th { background: #f3f3f3; }
tr.failed td { background: #fff0f0; }
.verdict { display: inline-block; padding: 0 0.4em; border-radius: 3px; font-size: 0.85em; white-space: nowrap; }
.held { background: #d7f5dd; } .contradicted { background: #ffd9d9; } .inconclusive { background: #fff3c4; }
.not-tested { background: #eee; }
.params, .evidence { font-family: ui-monospace, monospace; font-size: 0.85em; color: #444; }
.error { font-family: ui-monospace, monospace; white-space: pre-wrap; color: #a00; }
ul.claims { margin: 0; padding-left: 1.1em; }
details summary { cursor: pointer; color: #555; font-size: 0.85em; }
"""


def _esc(value) -> str:
    return html.escape(str(value))


def _format_headline(headline: Optional[dict]) -> str:
    if not headline:
        return "—"
    value = headline.get("value")
    fmt = headline.get("format", "{:.4g}")
    try:
        shown = fmt.format(value)
    except (TypeError, ValueError):
        shown = str(value)
    return f"{_esc(headline.get('name', ''))}: <b>{_esc(shown)}</b>"


def _claims_cell(claims: list[dict]) -> str:
    if not claims:
        return "—"
    items = []
    for claim in claims:
        verdict = claim.get("verdict", "not tested")
        evidence = (f'<details><summary>evidence</summary><span class="evidence">{_esc(claim["evidence"])}</span>'
                    "</details>" if claim.get("evidence") else "")
        items.append(f'<li><span class="verdict {verdict.replace(" ", "-")}">{_esc(verdict)}</span> '
                     f'{_esc(claim.get("id", ""))} {_esc(claim.get("claim", ""))}{evidence}</li>')
    return f'<ul class="claims">{"".join(items)}</ul>'


def _params_cell(params: dict) -> str:
    return '<span class="params">' + "<br>".join(f"{_esc(k)}={_esc(v)}" for k, v in sorted(params.items())) + "</span>"


def _zoos_table(run: dict) -> str:
    zoos = run.get("zoos") or []
    if not zoos:
        return ""
    rows = "".join(f'<tr><td>{_esc(z["suite"])}</td><td>{"cached" if z.get("cached") else "built"}</td>'
                   f'<td>{z.get("seconds", 0):.0f} s</td><td>{_esc(z.get("status", ""))}'
                   f'{(" — " + _esc(z["error"])) if z.get("error") else ""}</td></tr>' for z in zoos)
    total = sum(z.get("seconds", 0) for z in zoos) + sum(r.get("seconds", 0) for r in run["reports"])
    return (f"<h2>Zoo builds</h2><p>Built before the notebooks ran; run time of builds and notebooks together: "
            f"{total / 60:.1f} min.</p><table><thead><tr><th>suite</th><th>state</th><th>time</th><th>status</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>")


def _claim_order(claim_id: str) -> tuple:
    """B1a < B1b < B1cs < B2 < … < B10: prefix letters, number, suffix."""
    import re

    match = re.match(r"^([A-Za-z]*)(\d*)(.*)$", claim_id)
    prefix, number, suffix = match.groups()
    return (prefix, int(number) if number else 0, suffix)


def claim_rows(run: dict) -> list[tuple[dict, dict]]:
    """Every (claim, report) of a run, in claim-id order, each claim with ``holm``: whether it survives Holm's
    step-down procedure at a family-wise error of 5% over every decided claim of the run with a p-value (None when
    it has none). Refuses duplicate claim ids across the reports."""
    from ..errors import NbmergeError
    from ..evaluate.verdicts import holm

    rows = [(dict(claim), report) for report in run["reports"] for claim in (report.get("claims") or [])]
    ids = [c.get("id") for c, _ in rows if c.get("id")]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise NbmergeError(f"claim ids repeat across the reports: {', '.join(duplicates)}")
    family = [c.get("p") if c.get("outcome", c.get("verdict")) in ("held", "contradicted", "inconclusive") else None
              for c, _ in rows]
    for (claim, _), survives in zip(rows, holm(family)):
        claim["holm"] = survives
    rows.sort(key=lambda cr: _claim_order(cr[0].get("id") or "~"))
    return rows


def _decision_cell(claim: dict) -> str:
    """Threshold, minimum detectable effect and (for an inconclusive row) the test examples that would decide it."""
    threshold = claim.get("threshold")
    parts = []
    if isinstance(threshold, (list, tuple)) and len(threshold) == 2:
        parts.append(f"within [{threshold[0]:+.3g}, {threshold[1]:+.3g}]")
    elif isinstance(threshold, (int, float)):
        parts.append(f"clears {threshold:+.3g}")
    if claim.get("effect") is not None:
        parts.append(f"paper's effect {claim['effect']:+.3g}")
    if claim.get("mde") is not None and claim.get("outcome") == "inconclusive":
        parts.append(f"detectable ≥ {claim['mde']:.3g} {claim.get('unit') or ''}".rstrip())
    if claim.get("n_needed"):
        parts.append(f"~{claim['n_needed']:,} test examples to decide")
    return "; ".join(_esc(p) for p in parts) or "—"


def _claims_table(run: dict, link_prefix: str) -> str:
    """One table over every claim of every report: id · claim · the paper's figure and setting · ours and our
    setting · the decision's threshold · outcome · Holm · report."""
    rows = claim_rows(run)
    if not rows:
        return ""
    body = []
    for claim, report in rows:
        verdict = claim.get("verdict", "not tested")
        where = (f'<a href="{_esc(link_prefix + report["html"])}">{_esc(report["name"])}</a>' if report.get("html")
                 else _esc(report["name"]))
        reading = claim.get("reading") or "paper"
        holm = {True: "survives", False: "does not survive", None: "—"}[claim.get("holm")]
        setting = claim.get("setting") or claim.get("suite") or ""
        fold = (f'<details><summary>evidence</summary><span class="evidence">source: {_esc(claim.get("source", ""))}'
                f'<br>ours: {_esc(setting) or "—"}<br>decision: {_decision_cell(claim)}<br>'
                f'{_esc(claim.get("evidence", ""))}</span></details>')
        body.append(
            f'<tr><td>{_esc(claim.get("id", ""))}</td><td>{_esc(claim.get("claim", ""))}{fold}</td>'
            f'<td>{_esc(reading)}</td><td>{_esc(claim.get("paper", "")) or "—"}</td>'
            f'<td>{_esc(claim.get("ours", "")) or "—"}</td>'
            f'<td><span class="verdict {verdict.replace(" ", "-")}">{_esc(verdict)}</span></td><td>{_esc(holm)}</td>'
            f'<td>{where}</td></tr>')
    counts = {v: sum(c.get("verdict") == v for c, _ in rows) for v in VERDICTS}
    tally = ", ".join(f"{n} {v}" for v, n in counts.items())
    held = [c for c, _ in rows if c.get("verdict") == "held"]
    surviving = sum(1 for c in held if c.get("holm"))
    return (f'<h2 id="claims">Every paper claim</h2><p>{len(rows)} claims: {_esc(tally)}. Each claim is decided by '
            "one 95% interval of its estimate (oriented so that larger supports the claim; over seeds and test "
            "examples where there are seeds) against the claim's own threshold: <b>held</b> when the interval clears "
            "it, <b>contradicted</b> when it excludes what the claim needs (at or below the threshold, or below the "
            "paper's effect when the claim is about its size), <b>inconclusive</b> when it contains both (the row "
            "says what this run could detect at 80% power), <b>not tested</b> with the reason. Every method compared "
            "is tuned by the same protocol on validation. Error control across the report: Holm's step-down "
            f"procedure at a family-wise 5% over the decided claims' one-sided p-values; {surviving} of the "
            f"{len(held)} held claims survive it (column Holm). The paper's figures are on the paper's own models "
            "(e.g. ViT-L/14, absolute accuracy); ours are on the embedded zoo (e.g. text8: 8 text tasks on MiniLM, "
            "normalized accuracy): compare directions and sizes, not the numbers.</p>"
            '<table class="claims-table"><thead><tr><th>id</th><th>claim</th><th>reading</th>'
            "<th>paper (its setting)</th><th>ours (95% interval)</th><th>outcome</th><th>Holm</th>"
            f'<th>report</th></tr></thead><tbody>{"".join(body)}</tbody></table>')


def index_html(run: dict, link_prefix: str, earlier: list[dict], others: Sequence[dict] = (),
               documents: Sequence[tuple[str, str]] = ()) -> str:
    """The index page of one run: a row per report; ``link_prefix`` is the path from the page to the run folder.
    ``others``: the newest rows, from earlier runs, of the notebooks this run did not execute (an ``--only`` run).
    ``documents``: (title, href) of the measurements kept beside the reports (peer checks, memory)."""
    rows = []
    for row in run["reports"]:
        status = row["status"]
        link = f'<a href="{_esc(link_prefix + row["html"])}">{_esc(row["name"])}</a>' if row.get("html") else _esc(
            row["name"])
        notebook = f'<a href="{_esc(link_prefix + row["notebook"])}">{_esc(row["notebook"])}</a>'
        if status == "ok":
            result = _format_headline(row.get("headline"))
        else:
            result = f'<div class="error">{_esc(row.get("error", "failed"))}</div>'
        rows.append(
            f'<tr class="{_esc(status)}"><td>{link}</td><td>{notebook}</td><td>{_params_cell(row["parameters"])}</td>'
            f'<td>{_esc(row.get("date", ""))}</td><td>{_esc(row.get("git_sha", "")[:10])}</td>'
            f'<td>{row.get("seconds", 0):.0f} s</td><td>{result}</td><td>{_claims_cell(row.get("claims", []))}</td></tr>')
    history = ""
    if earlier:
        items = "".join(f'<li><a href="{_esc(r["href"])}">{_esc(r["id"])}</a> — {_esc(r["summary"])}</li>'
                        for r in earlier)
        history = f"<h2>Earlier runs</h2><ul>{items}</ul>"
    if others:
        items = []
        for row in others:
            prefix = f"runs/{row['run']}/"
            link = f'<a href="{_esc(prefix + row["html"])}">{_esc(row["name"])}</a>' if row.get("html") else _esc(
                row["name"])
            result = _format_headline(row.get("headline")) if row["status"] == "ok" else \
                f'<div class="error">{_esc(row.get("error", "failed"))}</div>'
            items.append(f'<tr class="{_esc(row["status"])}"><td>{link}</td><td>{_esc(row["run"])} '
                         f'({_esc(row["mode"])})</td><td>{row.get("seconds", 0):.0f} s</td><td>{result}</td>'
                         f'<td>{_claims_cell(row.get("claims", []))}</td></tr>')
        history = (f"<h2>The other notebooks, from earlier runs</h2><p>This run executed only some notebooks; "
                   f"the newest result of each other one is below, with the run it comes from.</p><table><thead>"
                   f"<tr><th>report</th><th>run</th><th>run time</th><th>headline</th><th>paper claims tested</th>"
                   f"</tr></thead><tbody>{''.join(items)}</tbody></table>") + history
    if documents:
        items = "".join(f'<li><a href="{_esc(href)}">{_esc(title)}</a></li>' for title, href in documents)
        history += f"<h2>Measurements beside the notebooks</h2><ul>{items}</ul>"
    claims_table = _claims_table(run, link_prefix)
    zoos = _zoos_table(run)
    failed = sum(r["status"] != "ok" for r in run["reports"])
    summary = f'{len(run["reports"])} reports, {failed} failed' if failed else f'{len(run["reports"])} reports'
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>nbmerge reports — {_esc(run["id"])}</title>
<style>{_CSS}</style></head><body>
<h1>nbmerge reports</h1>
<p>Run <b>{_esc(run["id"])}</b> ({_esc(run["mode"])} parameters), started {_esc(run["started"])}, git
{_esc(run.get("git_sha", "")[:10])}: {_esc(summary)}. Every number below comes from this run's notebooks.</p>
<table><thead><tr><th>report</th><th>notebook</th><th>parameters</th><th>date</th><th>git SHA</th><th>run time</th>
<th>headline</th><th>paper claims tested</th></tr></thead><tbody>
{"".join(rows)}
</tbody></table>
{zoos}
{claims_table}
{history}
</body></html>
"""


def write_index(path: Path, run: dict, link_prefix: str, earlier: list[dict], others: Sequence[dict] = (),
                documents: Sequence[tuple[str, str]] = ()) -> None:
    atomic_write_text(path, index_html(run, link_prefix, earlier, others, documents))


#: the measurements `make peers` and the memory benchmark keep in reports/, linked from the index when present
DOCUMENTS = (("Agreement with FusionBench (peer check)", "peer_fusionbench.md"),
             ("Agreement with the official ACE-Merging code (peer check)", "peer_ace.md"),
             ("Merge memory and time (benchmark)", "memory.md"),
             ("Speed and memory against mergekit (benchmark)", "mergekit.md"),
             ("BMM search on several workers: scaling and batched BO (benchmark)", "distributed_search.md"),
             ("LoRA experts: the low-rank route of the Gram-based methods (benchmark)", "lowrank.md"),
             ("GPU check: every method on an H200 against the CPU", "gpu_check.md"),
             ("GPU check: language-model merges with --device cuda", "gpu_lm_merges.md"))


def documents_in(reports: Path, prefix: str = "") -> list[tuple[str, str]]:
    """The DOCUMENTS present in ``reports``, with hrefs as seen from a page ``prefix`` away."""
    return [(title, prefix + name) for title, name in DOCUMENTS if (reports / name).exists()]
