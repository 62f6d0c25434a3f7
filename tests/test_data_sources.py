"""Every source file the embedded zoos read is installed by the project's own set-up, from the package that owns it.

A developer machine with a package installed by hand makes CI greener than a fresh machine: these tests derive the
owner of every recorded system file with ``dpkg -S`` and require it to be both the package the manifest names and a
package `make setup` installs (the Makefile's DEBIAN_PACKAGES); PyPI sources must be direct dependencies.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def recorded_files() -> list[tuple[str, str, str]]:
    """(manifest, path, package) for every file record in data_manifests/."""
    out = []

    def walk(value, manifest):
        if isinstance(value, dict):
            if isinstance(value.get("path"), str) and isinstance(value.get("package"), str):
                out.append((manifest, value["path"], value["package"]))
            for item in value.values():
                walk(item, manifest)
        elif isinstance(value, list):
            for item in value:
                walk(item, manifest)

    for path in sorted((ROOT / "data_manifests").rglob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")), str(path.relative_to(ROOT)))
    return out


def setup_debian_packages() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    match = re.search(r"^DEBIAN_PACKAGES\s*:=\s*((?:.*\\\n)*.*)$", text, re.M)
    assert match, "Makefile has no DEBIAN_PACKAGES list"
    return set(match.group(1).replace("\\\n", " ").split())


def project_dependencies() -> set[str]:
    """What the set-up installs: the core dependencies and every extra ``.[dev]`` names (``make setup`` installs
    ``.[dev]``; extras that name ``nbmerge[...]`` are followed)."""
    import tomllib

    assert "-e '.[dev]'" in (ROOT / "Makefile").read_text(), "the set-up no longer installs .[dev]"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names, seen, todo = set(), set(), ["dev"]
    specs = list(project["dependencies"])
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        specs += project["optional-dependencies"][extra]
        for spec in project["optional-dependencies"][extra]:
            if spec.startswith("nbmerge["):
                todo += spec[len("nbmerge["):spec.index("]")].split(",")
    for spec in specs:
        names.add(re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0].lower().replace("_", "-"))
    return names - {"nbmerge"}


def test_manifests_record_files():
    files = recorded_files()
    assert len(files) > 500
    assert {p for _, p, _ in files if p.startswith("/usr/share/games/fortunes")}


@pytest.mark.skipif(shutil.which("dpkg") is None, reason="needs dpkg (Debian)")
def test_every_system_source_is_owned_by_the_recorded_package_and_installed_by_setup():
    setup = setup_debian_packages()
    system = sorted({(p, pkg, m) for m, p, pkg in recorded_files() if p.startswith("/")})
    paths = sorted({p for p, _, _ in system})
    out = subprocess.run(["dpkg", "-S", *paths], capture_output=True, text=True, check=False)
    owner: dict[str, set[str]] = {}
    for line in out.stdout.splitlines():
        if line.startswith("diversion ") or ": " not in line:
            continue
        names, path = line.split(": ", 1)
        owner.setdefault(path.strip(), set()).update(n.strip() for n in names.split(","))
    problems = []
    for path, package, manifest in system:
        found = owner.get(path, set())
        if found != {package}:
            problems.append(f"{manifest}: {path} is recorded from {package}, dpkg -S says {sorted(found) or 'none'}")
        for name in found:
            if name not in setup:
                problems.append(f"{manifest}: {path} comes from {name}, which the Makefile's DEBIAN_PACKAGES "
                                "does not install")
    assert not problems, "\n".join(sorted(set(problems)))


def test_every_pypi_source_is_a_direct_dependency():
    deps = project_dependencies()
    pypi = {(pkg.lower().replace("_", "-"), m) for m, p, pkg in recorded_files() if not p.startswith("/")}
    missing = sorted(f"{m}: {pkg}" for pkg, m in pypi if pkg not in deps)
    assert not missing, "sources from packages pyproject.toml does not install: " + ", ".join(missing)


def test_setup_list_parses():
    packages = setup_debian_packages()
    assert {"fortunes", "fortunes-min", "fortunes-debian-hints", "wordnet-base", "chromium"} <= packages
