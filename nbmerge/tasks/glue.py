"""Language-model tasks from local files the user brings: GLUE classification and next-token prediction on text.

GLUE (``glue-...`` pools) reads, per task, the first layout found under ``data_root``:

* the GLUE distribution's TSVs: ``<root>/<DIR>/train.tsv`` and ``dev.tsv`` (``dev_matched.tsv`` for MNLI), with
  DIR as the distribution spells it (CoLA, SST-2, MRPC, QQP, MNLI, QNLI, RTE, WNLI) or the task's own name;
* parquet files as the hub's ``nyu-mll/glue`` holds them: ``<root>/<task>/train-*.parquet`` and
  ``validation-*.parquet`` (``validation_matched-*`` for MNLI);
* a ``datasets`` ``save_to_disk`` folder: ``<root>/<task>/train/`` and ``validation/`` with ``data-*.arrow``.

``data_manifests/glue/`` records, per task, these file names, the text columns and the label names. GLUE's test
labels are hidden, so, as FusionBench and the merging papers do, the public validation split is our **test**
split, and our **val** split is a seeded held-out part of train, disjoint from the train sample the notebooks use
for Grams and training.

Causal tasks (``lm-...`` pools): ``<root>/<task>.txt``, or ``<root>/<task>/train.txt`` (+ ``validation.txt``,
``test.txt`` when present). The text is tokenized once and cut into windows of ``max_length`` tokens; an example
is a window and its label the token that follows it, so a task's accuracy is next-token accuracy and its NLL the
mean negative log-likelihood of that token (``exp`` of it: the perplexity of those predictions).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import NbmergeError


@dataclass(frozen=True)
class GlueTask:
    """One GLUE task: its distribution folder, TSV columns (by header name, or by index for header-less CoLA),
    the hub's column names, and label names in the hub's order."""

    name: str
    folder: str
    tsv_text: tuple
    tsv_label: object
    hub_text: tuple
    labels: tuple
    tsv_header: bool = True
    dev: str = "dev.tsv"
    validation: str = "validation"


GLUE = {t.name: t for t in (
    GlueTask("cola", "CoLA", (3,), 1, ("sentence",), ("unacceptable", "acceptable"), tsv_header=False),
    GlueTask("sst2", "SST-2", ("sentence",), "label", ("sentence",), ("negative", "positive")),
    GlueTask("mrpc", "MRPC", ("#1 String", "#2 String"), "Quality", ("sentence1", "sentence2"),
             ("not_equivalent", "equivalent")),
    GlueTask("qqp", "QQP", ("question1", "question2"), "is_duplicate", ("question1", "question2"),
             ("not_duplicate", "duplicate")),
    GlueTask("mnli", "MNLI", ("sentence1", "sentence2"), "gold_label", ("premise", "hypothesis"),
             ("entailment", "neutral", "contradiction"), dev="dev_matched.tsv", validation="validation_matched"),
    GlueTask("qnli", "QNLI", ("question", "sentence"), "label", ("question", "sentence"),
             ("entailment", "not_entailment")),
    GlueTask("rte", "RTE", ("sentence1", "sentence2"), "label", ("sentence1", "sentence2"),
             ("entailment", "not_entailment")),
    GlueTask("wnli", "WNLI", ("sentence1", "sentence2"), "label", ("sentence1", "sentence2"),
             ("not_entailment", "entailment")),
)}
#: FusionBench's seven GPT-2 GLUE tasks (a ``glue-<model>-7`` pool), and all eight (``-8``)
GLUE7 = ("cola", "mnli", "mrpc", "qnli", "qqp", "rte", "sst2")
GLUE8 = GLUE7 + ("wnli",)


def glue_task(name: str) -> GlueTask:
    if name not in GLUE:
        raise NbmergeError(f"unknown GLUE task {name!r}; known: {', '.join(GLUE)} (STS-B is a regression task, "
                           "not supported)")
    return GLUE[name]


@dataclass
class Split:
    """Texts (one or two segments per example) and integer labels."""

    texts: list[tuple[str, ...]]
    labels: np.ndarray
    source: str

    def __len__(self) -> int:
        return len(self.labels)


def _label(task: GlueTask, value: str, where: str) -> int:
    value = value.strip()
    if value in task.labels:
        return task.labels.index(value)
    try:
        index = int(float(value))
    except ValueError:
        raise NbmergeError(f"{where}: label {value!r} is not one of {task.labels} or an index") from None
    if not 0 <= index < len(task.labels):
        raise NbmergeError(f"{where}: label {index} is out of range for {task.name} ({len(task.labels)} classes)")
    return index


def _read_tsv(task: GlueTask, path: Path) -> Split:
    texts, labels = [], []
    with path.open(newline="", encoding="utf-8") as handle:
        rows = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(rows, None) if task.tsv_header else None
        if task.tsv_header and header is None:
            raise NbmergeError(f"{path} is empty")

        def column(name):
            if isinstance(name, int):
                return name
            if name not in header:
                raise NbmergeError(f"{path}: no column {name!r} in its header {header} (a GLUE {task.folder} TSV "
                                   "has one)")
            return header.index(name)

        text_cols, label_col = [column(c) for c in task.tsv_text], column(task.tsv_label)
        for line, row in enumerate(rows, start=2 if header else 1):
            if len(row) <= max(text_cols + [label_col]):
                raise NbmergeError(f"{path}, line {line}: {len(row)} columns, expected at least "
                                   f"{max(text_cols + [label_col]) + 1} (malformed or truncated)")
            texts.append(tuple(row[c] for c in text_cols))
            labels.append(_label(task, row[label_col], f"{path}, line {line}"))
    if not labels:
        raise NbmergeError(f"{path} has no examples")
    return Split(texts, np.asarray(labels, dtype=np.int64), str(path))


def _pyarrow():
    try:
        import pyarrow  # noqa: F401
    except ModuleNotFoundError:
        raise NbmergeError("reading parquet or save_to_disk GLUE files needs pyarrow: pip install "
                           "'nbmerge[lm]' (or give the GLUE TSVs)") from None
    import pyarrow.ipc
    import pyarrow.parquet

    return pyarrow


def _table_split(task: GlueTask, table, where: str) -> Split:
    columns = table.column_names
    missing = [c for c in (*task.hub_text, "label") if c not in columns]
    if missing:
        raise NbmergeError(f"{where}: no column {missing[0]!r} (has {columns})")
    data = {c: table.column(c).to_pylist() for c in (*task.hub_text, "label")}
    texts = list(zip(*(data[c] for c in task.hub_text)))
    labels = np.asarray(data["label"], dtype=np.int64)
    if len(labels) == 0:
        raise NbmergeError(f"{where} has no examples")
    if labels.min() < 0 or labels.max() >= len(task.labels):
        raise NbmergeError(f"{where}: labels outside 0..{len(task.labels) - 1} (a test split with hidden labels?)")
    return Split([tuple(str(v) for v in row) for row in texts], labels, where)


def _read_parquet(task: GlueTask, files: list[Path]) -> Split:
    pa = _pyarrow()
    try:
        table = pa.concat_tables([pa.parquet.read_table(f) for f in files])
    except (OSError, pa.ArrowException) as exc:
        raise NbmergeError(f"{files[0]} cannot be read as parquet ({exc})") from None
    return _table_split(task, table, str(files[0].parent / files[0].name.split("-")[0]))


def _read_arrow_folder(task: GlueTask, folder: Path) -> Split:
    pa = _pyarrow()
    files = sorted(folder.glob("data-*.arrow"))
    try:
        tables = []
        for file in files:
            with pa.memory_map(str(file)) as source:
                tables.append(pa.ipc.open_stream(source).read_all())
        table = pa.concat_tables(tables)
    except (OSError, pa.ArrowException) as exc:
        raise NbmergeError(f"{folder} cannot be read as a save_to_disk split ({exc})") from None
    return _table_split(task, table, str(folder))


def _task_dirs(root: Path, task: GlueTask) -> list[Path]:
    return [root / name for name in dict.fromkeys((task.folder, task.name, task.name.upper()))]


def glue_splits(name: str, data_root: Path) -> dict[str, Split]:
    """``{"train", "validation"}`` of a GLUE task from the first layout found under ``data_root`` (module doc)."""
    task = glue_task(name)
    looked = []
    for folder in _task_dirs(Path(data_root), task):
        train, dev = folder / "train.tsv", folder / task.dev
        looked.append(f"{train} + {dev}")
        if train.is_file() and dev.is_file():
            return {"train": _read_tsv(task, train), "validation": _read_tsv(task, dev)}
        parquet = {s: sorted(folder.glob(f"{s}-*.parquet")) for s in ("train", task.validation)}
        looked.append(f"{folder}/train-*.parquet + {task.validation}-*.parquet")
        if all(parquet.values()):
            return {"train": _read_parquet(task, parquet["train"]),
                    "validation": _read_parquet(task, parquet[task.validation])}
        arrow = {s: folder / s for s in ("train", task.validation)}
        looked.append(f"{arrow['train']}/data-*.arrow + {arrow[task.validation]}/data-*.arrow")
        if all(any(p.glob("data-*.arrow")) for p in arrow.values() if p.is_dir()) and all(
                p.is_dir() for p in arrow.values()):
            return {"train": _read_arrow_folder(task, arrow["train"]),
                    "validation": _read_arrow_folder(task, arrow[task.validation])}
    raise NbmergeError(f"GLUE task {name!r}: no data under {data_root}; looked for " + "; ".join(looked))


def tokenize(tokenizer, texts: Sequence[tuple[str, ...]], max_length: int) -> np.ndarray:
    """``[N, 2, L]`` int32 ids and masks, right-padded, ``L`` the longest example capped at ``max_length``."""
    first = [t[0] for t in texts]
    second = [t[1] for t in texts] if texts and len(texts[0]) > 1 else None
    encoded = tokenizer(first, second, truncation=True, max_length=max_length)["input_ids"]
    length = max(1, max((len(ids) for ids in encoded), default=1))
    out = np.zeros((len(encoded), 2, length), dtype=np.int32)
    for i, ids in enumerate(encoded):
        out[i, 0, :len(ids)] = ids
        out[i, 1, :len(ids)] = 1
    return out


def glue_arrays(name: str, splits: dict[str, Split], tokenizer, max_length: int, eval_examples: int,
                train_examples: int, seed: int = 0) -> dict[str, np.ndarray]:
    """The pool's arrays of a GLUE task: ``val`` (the first ``eval_examples`` of a seeded permutation of train),
    ``train`` (the next ``train_examples``), ``test`` (the first ``eval_examples`` of a seeded permutation of
    GLUE's validation split; 0: all)."""
    task = glue_task(name)
    generator = np.random.default_rng([seed, sum(map(ord, name)), 20])
    order = generator.permutation(len(splits["train"]))
    n_val = min(eval_examples or len(order) // 5, len(order) // 2)
    chosen = {"val": order[:n_val], "train": order[n_val:n_val + train_examples]}
    test_order = generator.permutation(len(splits["validation"]))
    chosen["test"] = test_order[:eval_examples] if eval_examples else test_order
    out = {"class_names": np.array(list(task.labels))}
    for split, index in chosen.items():
        source = splits["validation" if split == "test" else "train"]
        if len(index) == 0:
            raise NbmergeError(f"GLUE task {name!r}: too few examples in {source.source} for a {split} split")
        out[f"{split}_x"] = tokenize(tokenizer, [source.texts[i] for i in index], max_length)
        out[f"{split}_y"] = source.labels[index]
    return out


# -- causal LM tasks ---------------------------------------------------------------------------------------------

def text_files(name: str, data_root: Path) -> dict[str, Path]:
    """A causal task's text files: ``<root>/<task>.txt`` (one file, split here) or a folder of split files."""
    root = Path(data_root)
    single = root / f"{name}.txt"
    if single.is_file():
        return {"all": single}
    folder = root / name
    files = {s: folder / f"{s}.txt" for s in ("train", "validation", "test") if (folder / f"{s}.txt").is_file()}
    if "train" not in files or "validation" not in files:
        raise NbmergeError(f"causal task {name!r}: no {single}, and no {folder / 'train.txt'} with "
                           f"{folder / 'validation.txt'}")
    return files


def _windows(tokenizer, path: Path, max_length: int) -> tuple[np.ndarray, np.ndarray]:
    text = path.read_text(encoding="utf-8")
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    count = len(ids) // (max_length + 1)
    if count == 0:
        raise NbmergeError(f"{path}: {len(ids)} tokens, fewer than one window of {max_length + 1}")
    ids = np.asarray(ids[:count * (max_length + 1)], dtype=np.int32).reshape(count, max_length + 1)
    x = np.stack([ids[:, :-1], np.ones_like(ids[:, :-1])], axis=1)
    return x, ids[:, -1].astype(np.int64)


def causal_arrays(name: str, files: dict[str, Path], tokenizer, max_length: int, eval_examples: int,
                  train_examples: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Windows of ``max_length`` tokens and the token after each. A single file is split by a seeded permutation
    of its windows into val, test and train; split files give their own (val from validation.txt, test from
    test.txt, or validation's halves when there is no test.txt)."""
    generator = np.random.default_rng([seed, sum(map(ord, name)), 30])
    windows = {s: _windows(tokenizer, p, max_length) for s, p in files.items()}
    if "all" in windows:
        x, y = windows.pop("all")
        order = generator.permutation(len(y))
        n_eval = min(eval_examples or len(y) // 5, len(y) // 3)
        parts = {"val": order[:n_eval], "test": order[n_eval:2 * n_eval], "train": order[2 * n_eval:]}
        windows = {s: (x[i], y[i]) for s, i in parts.items()}
    else:
        validation = windows.pop("validation")
        windows["val"], windows["test"] = (validation, windows["test"]) if "test" in windows else \
            (_half(validation, 0), _half(validation, 1))
    out = {"class_names": np.array([], dtype=str)}
    for split, (x, y) in windows.items():
        limit = train_examples if split == "train" else eval_examples
        if len(y) == 0:
            raise NbmergeError(f"causal task {name!r}: no {split} windows (the text is too short)")
        out[f"{split}_x"], out[f"{split}_y"] = x[:limit or None], y[:limit or None]
    return out


def _half(pair: tuple[np.ndarray, np.ndarray], which: int) -> tuple[np.ndarray, np.ndarray]:
    x, y = pair
    middle = max(1, len(y) // 2)
    return (x[:middle], y[:middle]) if which == 0 else (x[middle:], y[middle:])


@lru_cache(maxsize=4)
def load_tokenizer(folder: str):
    """The base model's own tokenizer, from its folder (offline)."""
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise NbmergeError(f"no tokenizer in {folder} ({str(exc).splitlines()[0]}): the base folder must hold "
                           "its tokenizer files") from None

