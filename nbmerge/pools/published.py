"""The figures other papers published for the checkpoints a CLIP pool was imported from, to show beside ours.

The TSV repository stores per-task test accuracies of zero-shot, weight averaging, task arithmetic, Consensus TA,
TSV-M and TSV-C for the TALL-masks open_clip checkpoints (ViT-B/32 and ViT-L/14, 8/14/20 tasks), and the TALL-masks
repository the experts' accuracies that normalise them; both ship under ``data_manifests/clip/published/`` with
their source, commit and licence. They apply to a pool only when it is made from those checkpoints: named
``clip-vit-b32-<n>`` or ``clip-vit-l14-<n>`` with n ∈ {8, 14, 20}, imported from the open_clip (task_vectors / TSV)
layout, holding exactly that setting's tasks. Any other pool (other checkpoints, the Hugging Face layout, another task
list) gets none, and the tables say nothing of them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Optional

from ..tasks.clip import manifest_dir
#: the TSV repository's method names → the rows of ours they stand beside
METHODS = {"Zero-shot": "base (zero-shot)", "Weight Average": "average", "Task Arithmetic": "task_arithmetic",
           "Consensus TA": "consensus", "TSV-M": "tsv", "TSV-C": "tsv_c"}
MODELS = ("vit-b32", "vit-l14")


def folder() -> Path:
    """data_manifests/clip/published/ (or under $NBMERGE_DATA_MANIFESTS, as every CLIP manifest)."""
    return manifest_dir() / "published"


def _load(name: str) -> dict:
    return json.loads((folder() / name).read_text())


def published_figures(suite: str, manifest: dict) -> Optional[dict]:
    """{"source", "experts_source", "tasks", "methods": {our name: {task: accuracy}}, "experts": {task: accuracy}}
    for a pool made from the TALL-masks checkpoints in a published setting, else None."""
    match = re.fullmatch(r"clip-(vit-b32|vit-l14)-(8|14|20)", suite)
    source = manifest.get("source") or {}
    if match is None or source.get("format") != "open_clip":
        return None
    model, size = match.group(1), f"{match.group(2)} Tasks"
    tsv = _load(f"tsv_{model}.json")
    setting = tsv["values"].get(size)
    tasks = list(manifest.get("tasks") or [])
    if not setting or sorted(tasks) != sorted(next(iter(setting.values()))):
        return None
    experts = _load(f"experts_{model}.json")
    return {"source": tsv["source"], "experts_source": experts["source"], "setting": f"{model}, {size.lower()}",
            "tasks": tasks, "methods": {METHODS[m]: {t: values[t] for t in tasks} for m, values in setting.items()
                                        if m in METHODS},
            "experts": {t: experts["values"][t] for t in tasks}}


def mean_over_tasks(values: dict[str, float], tasks: list[str], experts: Optional[dict[str, float]] = None) -> float:
    """Mean accuracy over ``tasks``; with ``experts``, normalized: each task's accuracy over its expert's."""
    return sum(values[t] / (experts[t] if experts else 1.0) for t in tasks) / len(tasks)


def beside_ours(figures: dict, ours: dict[str, dict[str, float]]) -> list[dict]:
    """Rows "method | source | mean | normalized | per task": ours (``{method: {task: accuracy}}``, test) and the
    published figure, joined by task name, for every method both have. Normalized accuracy: each task's accuracy
    over its expert's, averaged (our experts for ours, the published experts for the published figures)."""
    tasks = figures["tasks"]
    rows = []
    for method, published in figures["methods"].items():
        if method not in ours:
            continue
        for who, values, experts in (("ours", ours[method], ours.get("experts (own task)")),
                                     ("published", published, figures["experts"])):
            row = {"method": method, "source": who, "mean": mean_over_tasks(values, tasks)}
            if experts:
                row["normalized"] = mean_over_tasks(values, tasks, experts)
            rows.append({**row, **{t: values[t] for t in tasks}})
    return rows


def for_zoo(zoo, ours: dict[str, dict[str, float]]) -> tuple[list[dict], str]:
    """``beside_ours`` for an opened zoo or pool and its source line; ([], why) when it has no published figures."""
    suite = zoo.suite
    figures = published_figures(suite, zoo.manifest)
    if figures is None:
        return [], (f"no published figures for {suite}: they exist for pools imported from the TALL-masks "
                    "checkpoints (clip-vit-b32-<n> or clip-vit-l14-<n>, n = 8/14/20, open_clip layout)")
    return beside_ours(figures, ours), source_line(figures)


def source_line(figures: dict) -> str:
    s, e = figures["source"], figures["experts_source"]
    return (f"published figures ({figures['setting']}): {s['repository']} @ {s['commit'][:7]}, {s['path']} "
            f"({s['licence']}); experts: {e['repository']} @ {e['commit'][:7]}, {e['path']} ({e['licence']})")


def files() -> list[Path]:
    return sorted(folder().glob("*.json"))
