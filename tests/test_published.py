"""The committed results (``reports/published/``) are one complete default ``make report`` run: every notebook, every
paper claim with a verdict, produced from a commit of this repository, self-contained and small enough to commit."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "reports" / "published"
# every claim of the three papers (and the tour's), by its unique id; "…s" rows are our stricter reading of a claim
CLAIM_IDS = {"A1", "A2a", "A2b", "A3", "A4", "A4s", "A5a", "A5b", "B1a", "B1b", "B1c", "B1cs", "B2", "B3", "B3s",
             "B4a", "B4b", "B5a", "B5b", "B6", "B6s", "P2", "P3", *(f"T{i}" for i in range(1, 8))}
VERDICTS = {"held", "contradicted", "inconclusive", "not tested"}
# a run published before the four-outcome protocol (claims schema 1) used these ids and verdicts
CLAIM_IDS_V1 = {*(f"A{i}" for i in range(1, 6)), *(f"B{i}" for i in range(1, 7)), *(f"P{i}" for i in range(1, 4)),
                *(f"T{i}" for i in range(1, 8))}
VERDICTS_V1 = {"held", "did not hold", "not tested"}
MAX_BYTES = 25 * 2**20


@pytest.fixture(scope="module")
def run() -> dict:
    path = PUBLISHED / "run.json"
    assert path.exists(), "reports/published/run.json is missing: publish a complete `make report` run"
    return json.loads(path.read_text())


def schema(run: dict) -> int:
    return int(run.get("claims_schema", 1))


def needs_four_outcomes(run: dict) -> None:
    if schema(run) < 2:
        pytest.skip("reports/published/ predates the four-outcome protocol (claims schema 1): republish it with "
                    "`make report` to check outcomes, intervals and alt text")


@pytest.fixture(scope="module")
def index() -> str:
    return (PUBLISHED / "index.html").read_text(encoding="utf-8")


def test_a_complete_default_run(run):
    assert run["status"] == "complete" and run["mode"] == "default"
    assert not run["git_sha"].endswith("-dirty"), "published from a tree with uncommitted changes"
    assert re.fullmatch(r"[0-9a-f]{40}", run["git_sha"])
    assert run["zoos"] and all(z["status"] == "ok" and z["seconds"] >= 0 for z in run["zoos"])


def test_produced_from_a_commit_of_this_repository(run):
    git = ["git", "-C", str(ROOT)]
    try:
        shallow = subprocess.run([*git, "rev-parse", "--is-shallow-repository"], capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("git is not installed")
    if shallow.returncode != 0:
        pytest.skip("not a git checkout")
    if shallow.stdout.strip() == "true":
        pytest.skip("shallow clone: the publishing commit may lie outside the fetched history")
    found = subprocess.run([*git, "cat-file", "-e", f"{run['git_sha']}^{{commit}}"], capture_output=True)
    assert found.returncode == 0, f"the published run's commit {run['git_sha'][:12]} is not in this repository"


def test_every_notebook_is_published(run):
    names = {p.stem for p in (ROOT / "notebooks").glob("*.ipynb") if not p.name.startswith(".")}
    rows = {r["name"]: r for r in run["reports"]}
    assert set(rows) == names
    for name, row in rows.items():
        assert row["status"] == "ok", name
        assert row["seconds"] > 0, name
        for path in (row["html"], row["notebook"], f"{name}/metrics.json"):
            assert (PUBLISHED / path).is_file(), path


def _index_claims(index: str) -> list[tuple[str, str]]:
    """(id, verdict) of every row of the index's claims table (one claim id may have several rows)."""
    table = index[index.index('id="claims"'):]
    table = table[:table.index("</table>")]
    claims = []
    for row in re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)[1:]:
        cells = re.findall(r"<td>(.*?)</td>", row, flags=re.S)
        verdict = re.search(r'class="verdict[^"]*">([^<]+)<', row)
        claims.append((html.unescape(cells[0]), verdict.group(1) if verdict else ""))
    return claims


def test_the_index_lists_every_claim_with_a_verdict(run, index):
    claims = _index_claims(index)
    ids = {id_ for id_, _ in claims}
    expected_ids, verdicts = (CLAIM_IDS, VERDICTS) if schema(run) >= 2 else (CLAIM_IDS_V1, VERDICTS_V1)
    assert expected_ids <= ids, f"claims missing from the index: {sorted(expected_ids - ids)}"
    assert all(v in verdicts for _, v in claims), claims
    recorded = [c for name in (r["name"] for r in run["reports"])
                for c in json.loads((PUBLISHED / name / "metrics.json").read_text()).get("claims", [])]
    assert sorted((c["id"], c["verdict"]) for c in recorded) == sorted(claims)
    if schema(run) >= 2:
        assert len({c["id"] for c in recorded}) == len(recorded), "claim ids repeat"
        assert {c["id"] for c in recorded if c["id"].startswith("P1")}, "P1 (or P1a/P1b) is missing"
    for c in recorded:
        if c["verdict"] != "not tested":
            assert c["ours"] not in ("", "—"), f"{c['id']} has a verdict but no number of ours"
        assert c["evidence"], c["id"]


def test_the_index_shows_each_notebooks_time(run, index):
    for row in run["reports"]:
        assert f'href="{row["html"]}"' in index
    assert "time" in index


def test_small_and_self_contained():
    files = [p for p in PUBLISHED.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) <= MAX_BYTES
    for page in (p for p in files if p.suffix == ".html"):
        text = page.read_text(encoding="utf-8")
        remote = re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="(https?:)?//', text)
        assert not remote, f"{page.name} loads something from the network"


def test_formulas_render_from_the_published_copy_of_mathjax():
    for page in PUBLISHED.glob("*.html"):
        sources = re.findall(r'<script[^>]+src="([^"?]*MathJax\.js)', page.read_text(encoding="utf-8"))
        for src in sources:
            assert (page.parent / src).resolve().is_relative_to(PUBLISHED.resolve()), (page.name, src)
            assert (page.parent / src).is_file(), (page.name, src)


def _expected_outcome(claim: dict) -> str:
    """The outcome a claim's own interval and threshold give (written out here, independently of the package)."""
    lo, hi = claim["interval"]
    threshold = claim["threshold"]
    if isinstance(threshold, list):
        low, high = threshold
        if low < lo and hi < high:
            return "held"
        return "contradicted" if (lo >= high or hi <= low) else "inconclusive"
    if lo > threshold:
        return "held"
    effect = claim.get("effect")
    if hi <= threshold or (effect is not None and effect > threshold and hi < effect):
        return "contradicted"
    return "inconclusive"


def test_every_outcome_follows_from_its_interval_and_threshold(run):
    """Item 6 of the verdict protocol: every decided claim carries estimate, interval, threshold, mde, outcome and
    reading, and its outcome is the one its interval and threshold give; an inconclusive claim says what it could
    have detected; no claim is decided "did not hold"."""
    needs_four_outcomes(run)
    recorded = [c for name in (r["name"] for r in run["reports"])
                for c in json.loads((PUBLISHED / name / "metrics.json").read_text()).get("claims", [])]
    assert recorded
    for c in recorded:
        for key in ("estimate", "interval", "threshold", "mde", "outcome", "reading"):
            assert key in c, (c["id"], key)
        assert c["outcome"] == c["verdict"] and c["outcome"] in VERDICTS, c["id"]
        assert c["reading"] in ("paper", "strict"), c["id"]
        if c["outcome"] == "not tested":
            assert c["evidence"], c["id"]
            continue
        lo, hi = c["interval"]
        assert lo <= hi and c["estimate"] is not None, c["id"]
        assert c["outcome"] == _expected_outcome(c), (c["id"], c["outcome"], c["interval"], c["threshold"])
        if c["outcome"] == "inconclusive":
            assert c["mde"] is not None and c["mde"] > 0, c["id"]


def test_every_figure_has_alt_text(run):
    needs_four_outcomes(run)
    for page in PUBLISHED.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        for tag in re.findall(r"<img\b[^>]*>", text):
            alt = re.search(r'alt="([^"]*)"', tag)
            assert alt and alt.group(1).strip() and "No description has been provided" not in alt.group(1), \
                (page.name, tag[:120])
