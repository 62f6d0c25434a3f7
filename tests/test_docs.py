"""The repository documents itself: no file cites documents users never see, and every docs/ page cited exists."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Internal team notes that are not part of the repository; users cannot follow a citation of them.
INTERNAL = re.compile(r"\b(?:METHODS|ENV|ZOO_NOTES|BRIEF|STYLE)\.md\b|\bZOO_NOTES\b")
DOCS_PAGE = re.compile(r"\bdocs/([\w.-]+\.md)\b")


def tracked_files() -> list[Path]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [REPO / name for name in out.decode().split("\0") if name]


def text_of(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="ignore")
    except (FileNotFoundError, IsADirectoryError):  # deleted in the working tree, or a submodule
        return ""


def test_no_file_cites_internal_notes():
    offenders = []
    for path in tracked_files():
        relative = path.relative_to(REPO)
        if relative.parts[0] == "tests":
            continue
        for number, line in enumerate(text_of(path).splitlines(), 1):
            if INTERNAL.search(line):
                offenders.append(f"{relative}:{number}: {line.strip()[:100]}")
    assert not offenders, "cite docs/ instead of internal notes:\n" + "\n".join(offenders)


def test_cited_docs_pages_exist():
    cited = {}
    for path in sorted((REPO / "nbmerge").rglob("*.py")):
        for name in DOCS_PAGE.findall(text_of(path)):
            cited.setdefault(name, path.relative_to(REPO))
    missing = {name: str(where) for name, where in cited.items() if not (REPO / "docs" / name).is_file()}
    assert not missing, f"docs pages cited but missing: {missing}"
    assert {"methods.md", "environment.md", "zoo.md"} <= set(cited)


def _profile_table(text: str) -> dict[tuple[str, str], object]:
    """(notebook, parameter) → value of docs/protocol.md's default-profile table (values in YAML)."""
    import yaml

    block = text.split("<!-- default-profile -->", 1)[1].split("<!-- /default-profile -->", 1)[0]
    out = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("notebook", "") or set(cells[0]) <= {"-"}:
            continue
        out[(cells[0], cells[1].strip("`"))] = yaml.safe_load(cells[2].strip("`"))
    return out


def test_protocol_page_states_the_default_profile_exactly():
    """docs/protocol.md's table of the default profile is notebooks/parameters/default.yaml, key for key: what the
    page says the published run used is what it used."""
    import yaml

    profile = yaml.safe_load((REPO / "notebooks" / "parameters" / "default.yaml").read_text())
    shared = profile.pop("all", {})
    expected = {}
    for notebook, params in profile.items():
        for key, value in {**shared, **(params or {})}.items():
            if key not in ("device", "seed"):
                expected[(notebook, key)] = value
    documented = _profile_table((REPO / "docs" / "protocol.md").read_text())
    assert documented == expected, {
        "missing from docs/protocol.md": sorted(set(expected) - set(documented)),
        "not in default.yaml": sorted(set(documented) - set(expected)),
        "different": sorted(k for k in set(expected) & set(documented) if expected[k] != documented[k])}


def test_the_readme_method_table_is_generated_from_the_registry_and_the_peer_reports():
    """The table lists every registered method with its data, result and peer check; regenerate it with
    `python -m bench.method_table --write` after adding a method or rerunning a peer check."""
    from bench.method_table import block, readme_block

    import nbmerge.methods  # noqa: F401
    from nbmerge.engine.registry import all_methods

    current = readme_block((REPO / "README.md").read_text())
    assert current is not None, "README.md lost its method-table markers"
    assert current == block(), "README's method table is stale: run `python -m bench.method_table --write`"
    for method in all_methods():
        assert f"[`{method.name}`]" in current


def test_the_readme_states_the_contention_report_as_it_stands():
    """The README's figure for the main job beside a busy process is the one reports/contention_main_job.json holds
    (rerun `python -m bench.main_job_pairs report` after a pair, then update the README), each part's ratio, and
    whether the whole job is paired yet."""
    import json

    report = json.loads((REPO / "reports" / "contention_main_job.json").read_text())
    readme = " ".join((REPO / "README.md").read_text().split())
    assert f"**{report['ratio']:.2f}×**" in readme
    for pair in report["pairs"]:
        assert f"{pair['ratio']:.2f}×" in readme, f"the README does not give {pair['part']}'s ratio"
    for part in report["missing"]:
        assert part in readme, f"the README does not say that {part} is not paired yet"
    if len({pair["commit"] for pair in report["pairs"]}) > 1:
        assert "did not all run one commit" in readme
    # why the figure is what it is: beside a neighbour apart, the least slow-down is one core's time over two cores'
    seeds = json.loads((REPO / "reports" / "contention_seeds_apart.json").read_text())
    assert seeds["neighbour"] == "apart" and seeds["machine"]["sched_autogroup"] is True
    ratios = seeds["summary"]["ratios"]
    for name in ("threads1 idle / default idle seeds", "adaptive busy / default idle seeds",
                 "procs busy / default idle seeds"):
        assert f"{ratios[name]:.2f}×" in readme, f"the README does not give {name}"
