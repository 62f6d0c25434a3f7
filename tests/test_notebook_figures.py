"""No notebook cell draws a figure twice (issue 18: "the tour's Pareto figure is drawn twice").

Under ``%matplotlib inline`` every figure still open at the end of a cell is drawn once; a cell whose last statement
is an expression that *returns* the figure draws it a second time, as the cell's value, unless the line ends with
``;``. The notebooks' plotting helpers (``plot_*``) return their figures, so a cell ending in a bare ``plot_*(...)``
call shows the figure twice. This checks every committed notebook statically (cheap); tests/test_readme_commands.py
counts the images per cell of an executed tour, Pareto preview included.
"""

import ast
import io
import tokenize
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def _python(source: str) -> str:
    """The cell without IPython's line magics and shell escapes (blanked, so line numbers stay)."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def _silenced(source: str) -> bool:
    """IPython's rule: the cell's value is not displayed when its last token (comments aside) is ``;``."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
              if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER,
                                tokenize.INDENT, tokenize.DEDENT)]
    return bool(tokens) and tokens[-1].string == ";"


def _plot_calls(node: ast.AST) -> list[str]:
    names = []
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name.startswith("plot") or name in ("figure", "subplots"):
                names.append(name)
    return names


def figures_drawn_twice(source: str) -> list[str]:
    """The figure-returning calls a cell shows as its value (empty when the cell is fine)."""
    code = _python(source)
    if not code.strip():
        return []
    body = ast.parse(code).body
    if not body or not isinstance(body[-1], ast.Expr) or _silenced(code):
        return []
    last = body[-1].value
    if isinstance(last, ast.Call) and getattr(last.func, "id", getattr(last.func, "attr", "")) == "figure":
        return []   # nbmerge's figure(fig, alt) shows the figure with its alt text and returns None
    return _plot_calls(body[-1])


def test_the_check_sees_a_figure_returned_as_the_cells_value():
    assert figures_drawn_twice("%matplotlib inline\nfig = 1\ntour.plot_front(x)") == ["plot_front"]
    assert figures_drawn_twice("plot_a(x) if ok else print('no')  # note") == ["plot_a"]
    assert figures_drawn_twice("tour.plot_front(x);  # shown once") == []
    assert figures_drawn_twice("if ok:\n    tour.plot_front(x)") == []   # not the cell's value
    assert figures_drawn_twice("result = tour.plot_front(x)") == []
    assert figures_drawn_twice("print(summary(x))") == []
    assert figures_drawn_twice("figure(tour.plot_front(x), 'the front: accuracy on task 1 against task 2')") == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_cell_returns_a_figure_as_its_value(path):
    nb = nbformat.read(str(path), as_version=4)
    bad = {index: calls for index, cell in enumerate(nb.cells) if cell.cell_type == "code"
           for calls in [figures_drawn_twice(cell.source)] if calls}
    assert not bad, f"{path.name}: cells whose last line returns a figure (end it with `;`): {bad}"
