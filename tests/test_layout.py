"""The package's shape: no import cycles (counting imports inside functions), and `import nbmerge` / `nbmerge
--help` without torch."""

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "nbmerge"


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set) -> set:
    name, out = _module(path), set()
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(parent + ([node.module] if node.module else []))
            out |= {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}
    return {m for m in out if m in modules and m != name}


def import_graph() -> dict:
    files = {_module(p): p for p in PACKAGE.rglob("*.py")}
    return {m: _imports(p, set(files)) for m, p in files.items()}


def cycles(graph: dict) -> list:
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_one():  # negative control
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_import_and_help_do_not_load_torch():
    code = ("import sys, contextlib, io\nimport nbmerge, nbmerge.cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        nbmerge.cli.main(['--help'])\n    except SystemExit:\n        pass\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _top_level_imports(path: Path) -> set:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_the_package_does_not_import_the_repository_scripts():
    # `bench/` and `tests/` are on the path only when Python starts in the repository root; a notebook's kernel
    # (started in notebooks/) or an installed package cannot import them
    scripts = {p.name for p in PACKAGE.parent.iterdir() if p.is_dir() and (p / "__init__.py").exists()} - {"nbmerge"}
    assert {"bench", "tests"} & scripts
    offenders = {str(p.relative_to(PACKAGE.parent)): sorted(_top_level_imports(p) & scripts)
                 for p in PACKAGE.rglob("*.py") if _top_level_imports(p) & scripts}
    assert offenders == {}


def test_notebook_modules_stay_small():
    # experiments/ holds what a notebook shows (its config, steps, tables, figures, claims); the methods, solvers,
    # searches and measures they call live in the library, so no module of it grows past ~300 lines
    modules = (PACKAGE / "experiments").rglob("*.py")
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in modules}
    # 420 while the four-outcome claims (per-seed views, combined decisions, timing rounds) sit beside the steps they
    # decide; the one study layer under the notebooks is where these modules shrink back towards 300
    assert {name: n for name, n in sizes.items() if n > 420} == {}


def test_no_module_imports_another_modules_private_names():
    """What one module takes from another is public: no ``from x import _name`` inside the package (a private
    helper another module needs is given a public name where it lives)."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                found += [f"{path.relative_to(PACKAGE)}: from {'.' * node.level}{node.module} import {a.name}"
                          for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    assert found == []
