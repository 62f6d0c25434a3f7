"""What every notebook shares (``nbmerge.experiments.common``): claims, the metrics record, tables."""

import json
from pathlib import Path

import pytest
import torch

from nbmerge.errors import NbmergeError
from nbmerge.evaluate.verdicts import decide
from nbmerge.experiments import tour
from nbmerge.experiments.common import Claim, claim, finish
from nbmerge.params import notebook_config

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def test_claim_verdicts():
    assert claim("x", "y", None).verdict == "not tested"
    held = decide(2.0, interval=[1.0, 3.0], threshold=0.0)
    assert claim("x", "y", held, id="T1").id == "T1" and claim("x", "y", held, id="T1").verdict == "held"
    with pytest.raises(NbmergeError, match="Decision"):
        claim("x", "y", True, id="T1")
    with pytest.raises(NbmergeError, match="verdict must be one of"):
        Claim("x", "y", "maybe")


def test_finish_writes_metrics(tmp_path, capsys):
    out = tmp_path / "metrics.json"
    config = notebook_config(tour.TourConfig, NOTEBOOKS / "00_tour.ipynb", suite="micro")
    finish("demo", headline={"name": "h", "value": torch.tensor(0.5)}, metrics={"nan": float("nan")},
           claims=[claim("c", "s", decide(2.0, interval=[1.0, 3.0], threshold=0.0), "e", id="X1")], config=config,
           out=out)
    record = json.loads(out.read_text())
    assert record["headline"]["value"] == 0.5 and record["metrics"]["nan"] is None
    assert record["claims"][0]["verdict"] == "held" and record["parameters"]["suite"] == "micro"
    assert record["claims"][0]["interval"] == [1.0, 3.0] and record["claims"][0]["outcome"] == "held"
    assert "git_sha" in record["fingerprint"] and "environment:" in capsys.readouterr().out
    with pytest.raises(NbmergeError, match="headline needs"):
        finish("demo", headline={"value": 1}, metrics={}, out=out)


def test_table_escapes_names_and_writes_only_its_own_markup():
    """Task, expert, method and parameter names come from the user's folders: a name that is HTML is shown as text."""
    from nbmerge.experiments.common import bold, table

    evil = "alpha<img src=x onerror=alert(1)>"
    page = table([{"expert": evil, "acc": 0.5, "best": bold("90.0%")}], caption=f"experts of {evil}",
                 formats={"acc": "{:.0%}"}).data
    assert "<img" not in page and page.count("&lt;img src=x onerror=alert(1)&gt;") == 2
    assert "<b>90.0%</b>" in page and "<td>50%</td>" in page
    assert "<th>expert</th>" in page and table([{"<th>": 1}]).data.count("&lt;th&gt;") == 1
