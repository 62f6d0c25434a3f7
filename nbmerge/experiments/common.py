"""What every report notebook shares: claims with verdicts, tables, the environment fingerprint, metrics.json.

A notebook's last cell calls :func:`finish`, which writes ``metrics.json`` (read by ``nbmerge report``'s index)
into the working folder and prints the fingerprint. Verdicts are computed from the run's own numbers by
:func:`claim`; nothing is typed in by hand.
"""

from __future__ import annotations

import html
import json
import os
import platform
import time
from pathlib import Path
from typing import Optional, Sequence

from ..errors import NbmergeError
from ..evaluate.claims import VERDICTS, Claim, claim  # noqa: F401 (the notebooks' one import of their helpers)
from ..engine.io import atomic_write_text, jsonable
from ..provenance import git_sha


def fingerprint(device: str = "cpu", seed: Optional[int] = None) -> dict:
    """Git SHA, package versions, device and seed: enough to tell two runs' environments apart."""
    import numpy as np
    import torch

    import nbmerge

    info = {"git_sha": git_sha(), "nbmerge": nbmerge.__version__, "python": platform.python_version(),
            "torch": torch.__version__, "numpy": np.__version__, "machine": platform.machine(),
            "threads": torch.get_num_threads(), "device": device, "seed": seed,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    if str(device).startswith("cuda") and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(torch.device(device))
    return info


def finish(name: str, *, headline: dict, metrics: dict, claims: Sequence[Claim] = (), config=None,
           device: str = "cpu", seed: Optional[int] = None, out: str | os.PathLike = "metrics.json") -> dict:
    """Write ``metrics.json`` (headline, metrics, claim verdicts, parameters, fingerprint) and print the fingerprint.

    ``headline`` is ``{"name": ..., "value": ..., "format": "{:.1%}"}``: the one number the index shows.
    """
    if not {"name", "value"} <= set(headline):
        raise NbmergeError("headline needs a name and a value")
    record = {"notebook": name, "headline": headline, "metrics": metrics,
              "claims": [c.to_dict() for c in claims], "parameters": config,
              "fingerprint": fingerprint(device, seed)}
    record = jsonable(record)
    atomic_write_text(Path(out), json.dumps(record, indent=1, sort_keys=True))
    print("environment:", json.dumps(record["fingerprint"], indent=1))
    ids = [c["id"] for c in record["claims"] if c["id"]]
    if len(ids) != len(set(ids)):
        raise NbmergeError(f"claim ids must be unique within a report: {sorted(ids)}")
    for c in record["claims"]:
        print(f"[{c['verdict']}] {c['id']} {c['claim']} — {c['evidence']}")
    return record


NO_ALT = "No description has been provided for this image"   # nbconvert's placeholder: never on a report


def figure(fig, alt: str, dpi: int = 110):
    """Show a matplotlib figure in the notebook with ``alt`` as its description (the ``alt`` text of the image on
    the HTML page), then close it so that the inline backend does not show it a second time. ``alt`` says what the
    figure shows (axes, what is compared, what to read from it), not what it is called."""
    import base64
    import html
    import io

    import matplotlib.pyplot as plt
    from IPython.display import display

    if not isinstance(alt, str) or len(alt.strip()) < 20 or NO_ALT in alt:
        raise NbmergeError(f"a figure needs alt text saying what it shows (got {alt!r})")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    text = " ".join(alt.split())
    # an <img> with its alt attribute (nbconvert's templates drop an image/png output's alt metadata); the plain-text
    # form is the description itself
    display({"text/html": f'<img src="data:image/png;base64,{data}" alt="{html.escape(text, quote=True)}" '
                          'style="max-width: 100%">', "text/plain": text}, raw=True)


class Markup(str):
    """A table cell that is HTML built by nbmerge's own code (e.g. :func:`bold`); every other cell, header and
    caption is escaped, since task, expert, method and parameter names come from the user's folders and YAML."""


def bold(text) -> Markup:
    return Markup(f"<b>{html.escape(str(text))}</b>")


def table(rows: Sequence[dict], columns: Optional[Sequence[str]] = None, formats: Optional[dict] = None,
          caption: str = ""):
    """An HTML table for a notebook (no pandas needed); ``formats`` maps column → format string. Text is escaped
    (only :class:`Markup` cells are written as HTML)."""
    from IPython.display import HTML

    columns = list(columns or (rows[0].keys() if rows else []))
    formats = formats or {}

    def cell(column, value):
        if value is None:
            return "—"  # not applicable (e.g. α for a model without one), never the word "None"
        if isinstance(value, Markup):
            return str(value)
        if isinstance(value, float):
            return html.escape(formats.get(column, "{:.4f}").format(value))
        return html.escape(str(value))

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{cell(c, r.get(c, ''))}</td>" for c in columns) + "</tr>" for r in rows)
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return HTML(f'<table class="nbmerge">{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


def prepare_suites(suites: Sequence[str], checkpoints: str = "", data_root: str = "", device: str = "cpu",
                   cache: str = "", log=print) -> None:
    """Make every suite a notebook uses ready: an embedded zoo builds itself when first loaded; a pool of real
    checkpoints (``clip-...``, ``glue-...``, ``lm-...``) is imported here from ``checkpoints`` and ``data_root``
    (once: a pool whose sources are unchanged is reused). Without them the pool must have been imported already
    (`nbmerge pool import`)."""
    from ..pools.kinds import is_pool

    pools = [s for s in dict.fromkeys(suites) if is_pool(s)]
    if (checkpoints or data_root) and not pools:
        log("checkpoints/data_root are only used by imported pools (clip-, glue-, lm-); ignored for "
            + ", ".join(suites))
    for suite in pools:
        if checkpoints or data_root:
            if not (checkpoints and data_root):
                raise NbmergeError(f"suite {suite!r}: give both checkpoints and data_root (got checkpoints="
                                   f"{checkpoints!r}, data_root={data_root!r})")
            from ..pools.imports import import_pool

            import_pool(suite, checkpoints, data_root, device=device, cache=cache or None, log=log)
