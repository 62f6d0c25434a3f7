"""The CLIP benchmark tasks (8/14/20, METHODS.md 0.4) read from a user's local data root. Nothing is downloaded.

`data_manifests/clip/<task>.json` records each task's class names in label order, its zero-shot templates (the
task-vectors/TSV ones), its splits (including the seeded rule that carves the validation split out of train, as
TSV does), the local layouts it can be read from and the archive checksums torchvision publishes.
`data_manifests/clip/suites.json` lists the clip-8, clip-14 and clip-20 suites.

`open_task(task, data_root, split, preprocess)` reads one split as a torch Dataset of (image, label) from:

* an ImageFolder tree ``<data_root>/<dir>/<split dir>/<class dir>/*.png|jpg|...`` (every task);
* MNIST-style IDX files, raw or gzipped (MNIST, FashionMNIST, KMNIST, EMNIST letters);
* CIFAR-10/100 python pickles, read by an unpickler that only admits numpy arrays and plain data;
* SVHN's ``*_32x32.mat`` files.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import pickle
import re
import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Optional, Union

import numpy as np
import torch
from PIL import Image

from ..errors import NbmergeError

MANIFEST_FORMAT = 1
SPLITS = ("train", "val", "test", "train_full")  # train_full: the source train split before val is carved out
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp", ".gif")
FAKE_FORMATS = ("imagefolder", "idx", "idx.gz", "cifar", "svhn_mat")
_TASK_KEYS = ("name", "aliases", "num_classes", "class_names", "class_dirs", "templates", "source", "splits", "layout")

PathLike = Union[str, os.PathLike]


# ----------------------------------------------------------------------------------------------------------------
# Manifests

def manifest_dir() -> Path:
    """data_manifests/clip/ at the repository root, or $NBMERGE_DATA_MANIFESTS/clip."""
    override = os.environ.get("NBMERGE_DATA_MANIFESTS")
    base = Path(override) if override else Path(__file__).resolve().parents[2] / "data_manifests"
    return base / "clip"


def _read_json(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise NbmergeError(f"manifest {path} does not exist") from None
    except json.JSONDecodeError as error:
        raise NbmergeError(f"manifest {path} is not valid JSON ({error})") from None


@lru_cache(maxsize=4)
def _task_index(directory: Path) -> dict[str, str]:
    """Lower-cased task names and aliases → canonical name (= the manifest's file stem)."""
    index: dict[str, str] = {}
    for path in sorted(directory.glob("*.json")):
        if path.name == "suites.json":
            continue
        manifest = _read_json(path)
        for key in [manifest.get("name", path.stem), *manifest.get("aliases", [])]:
            other = index.setdefault(key.lower(), path.stem)
            if other != path.stem:
                raise NbmergeError(f"task name or alias {key!r} appears in both {other}.json and {path.name} "
                                   f"in {directory}")
    return index


def task_names() -> list[str]:
    """Canonical names of every task with a manifest, in clip-20 order."""
    return list(load_suite_manifest("clip-20")["tasks"])


def load_task_manifest(task: str) -> dict:
    """The manifest of one task, by its canonical name or any alias (case-insensitive): "Cars", "stanford-cars"."""
    directory = manifest_dir()
    index = _task_index(directory)
    stem = index.get(task.lower())
    if stem is None:
        names = sorted({value for value in index.values()})
        raise NbmergeError(f"unknown CLIP task {task!r}; tasks with a manifest in {directory}: {', '.join(names)} "
                           "(aliases such as 'stanford-cars' or 'sun397' are accepted too)")
    path = directory / f"{stem}.json"
    manifest = _read_json(path)
    _check_task_manifest(manifest, path)
    return manifest


def _check_task_manifest(manifest: dict, path: Path) -> None:
    if manifest.get("format") != MANIFEST_FORMAT:
        raise NbmergeError(f"{path} has manifest format {manifest.get('format')!r}; this nbmerge reads "
                           f"{MANIFEST_FORMAT}")
    missing = [key for key in _TASK_KEYS if key not in manifest]
    if missing:
        raise NbmergeError(f"{path} lacks the fields {', '.join(missing)}")
    count = manifest["num_classes"]
    for key in ("class_names", "class_dirs", "class_dirs_alt", "tsv_prompt_names", "fusionbench_class_names"):
        if key in manifest and len(manifest[key]) != count:
            raise NbmergeError(f"{path}: {key} has {len(manifest[key])} entries, num_classes is {count}")
    bad = [template for template in manifest["templates"] if "{c}" not in template]
    if bad or not manifest["templates"]:
        raise NbmergeError(f"{path}: every template needs the placeholder '{{c}}'; bad: {bad or 'no templates'}")


def load_suite_manifest(name: str) -> dict:
    """``{"suite", "tasks", "num_classes"}`` for "clip-8", "clip-14" or "clip-20" (tasks in METHODS.md order)."""
    path = manifest_dir() / "suites.json"
    suites = _read_json(path)
    if suites.get("format") != MANIFEST_FORMAT:
        raise NbmergeError(f"{path} has manifest format {suites.get('format')!r}; this nbmerge reads "
                           f"{MANIFEST_FORMAT}")
    if name not in suites["suites"]:
        raise NbmergeError(f"unknown CLIP suite {name!r}; suites in {path}: {', '.join(suites['suites'])}")
    tasks = list(suites["suites"][name])
    return {"suite": name, "tasks": tasks,
            "num_classes": {task: load_task_manifest(task)["num_classes"] for task in tasks}}


def normalise_class_dir(name: str) -> str:
    """How class-dir names are compared: lower case, every run of non-alphanumerics is one '_'."""
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


# ----------------------------------------------------------------------------------------------------------------
# Reading one source split (the splits a dataset ships with: train, test, and for some val)

@dataclass
class _Source:
    """Images of one source split: an array (uint8 [N, H, W] or [N, H, W, 3]) or a list of files."""

    format: str
    location: Path
    labels: np.ndarray
    images: Optional[np.ndarray] = None
    files: Optional[list[Path]] = None
    transpose: bool = False


def _first_existing(candidates: list[Path], looked: list[str]) -> Optional[Path]:
    for path in candidates:
        looked.append(str(path))
        if path.exists():
            return path
    return None


def read_idx(path: PathLike) -> np.ndarray:
    """An IDX file (MNIST's format; gzipped when the name ends in .gz) as a uint8 array."""
    path = Path(path)
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as handle:
            data = handle.read()
    except (OSError, EOFError) as error:
        raise NbmergeError(f"{path}: cannot read IDX file ({error}); it may be truncated") from None
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise NbmergeError(f"{path}: not an IDX file (bad magic number)")
    if data[2] != 0x08:
        raise NbmergeError(f"{path}: IDX element type 0x{data[2]:02x} is not supported (only unsigned bytes, 0x08)")
    ndim = data[3]
    header = 4 + 4 * ndim
    if len(data) < header:
        raise NbmergeError(f"{path}: IDX header is truncated")
    dims = struct.unpack(f">{ndim}I", data[4:header])
    expected = int(np.prod(dims, dtype=np.int64))
    if len(data) - header != expected:
        raise NbmergeError(f"{path}: IDX header promises {expected} bytes of shape {list(dims)}, the file holds "
                           f"{len(data) - header}; it is truncated or corrupt")
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(dims)


def _idx_file(directory: Path, name: str) -> Optional[Path]:
    for candidate in (directory / name, directory / f"{name}.gz"):
        if candidate.exists():
            return candidate
    return None


def _read_idx_source(manifest: dict, root: Path, split: str, looked: list[str]) -> Optional[_Source]:
    spec = manifest["layout"]["idx"]
    files = spec["files"].get(split)
    if files is None:
        return None
    for directory in (root / d for d in spec["dirs"]):
        looked.append(str(directory / files["images"]) + "[.gz]")
        images_path = _idx_file(directory, files["images"])
        labels_path = _idx_file(directory, files["labels"])
        if images_path is None and labels_path is None:
            continue
        if images_path is None or labels_path is None:
            have, lack = (images_path, files["labels"]) if labels_path is None else (labels_path, files["images"])
            raise NbmergeError(f"{manifest['name']}: found {have} but not its partner {directory / lack}[.gz]")
        images, labels = read_idx(images_path), read_idx(labels_path)
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise NbmergeError(f"{manifest['name']}: {images_path} has shape {list(images.shape)} and {labels_path} "
                               f"{list(labels.shape)}; expected [N, H, W] images and [N] labels")
        labels = labels.astype(np.int64) - int(spec.get("label_offset", 0))
        _check_labels(manifest, labels, labels_path)
        return _Source("idx", images_path.parent, labels, images=images, transpose=bool(spec.get("transpose")))
    return None


class _PlainDataUnpickler(pickle.Unpickler):
    """Admits only what CIFAR's pickles hold: dicts, lists, strings, numbers and numpy arrays. Any other global
    (the way a pickle runs code) is refused."""

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
        ("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer"),
        ("numpy", "ndarray"), ("numpy", "dtype"),
        ("_codecs", "encode"),  # how protocol-2 pickles written by Python 3 spell a bytes object
    }

    def find_class(self, module: str, name: str):
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"global {module}.{name} is not allowed in a data pickle")


def load_plain_pickle(path: PathLike) -> object:
    """Unpickle a data-only file (CIFAR batches) without running arbitrary code; keys decoded as latin-1."""
    try:
        with open(path, "rb") as handle:
            return _PlainDataUnpickler(handle, encoding="latin1").load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as error:
        raise NbmergeError(f"{path}: refusing or unable to unpickle ({error})") from None


def _plain_keys(obj: object, path: Path) -> dict:
    if not isinstance(obj, dict):
        raise NbmergeError(f"{path}: expected a dict in this CIFAR pickle, found {type(obj).__name__}")
    return {key.decode("latin1") if isinstance(key, bytes) else key: value for key, value in obj.items()}


def _read_cifar_source(manifest: dict, root: Path, split: str, looked: list[str]) -> Optional[_Source]:
    spec = manifest["layout"]["cifar"]
    names = spec["files"].get(split)
    if names is None:
        return None
    directory = _first_existing([root / d / names[0] for d in spec["dirs"]], looked)
    if directory is None:
        return None
    directory = directory.parent
    missing = [str(directory / name) for name in names if not (directory / name).exists()]
    if missing:
        raise NbmergeError(f"{manifest['name']}: {directory} lacks {', '.join(missing)}")
    meta_path = directory / spec["meta"]["file"]
    if meta_path.exists():
        recorded = list(_plain_keys(load_plain_pickle(meta_path), meta_path).get(spec["meta"]["key"], []))
        if recorded != manifest["class_names"]:
            raise NbmergeError(f"{manifest['name']}: class names in {meta_path} ({recorded[:5]}...) differ from the "
                               f"manifest's ({manifest['class_names'][:5]}...)")
    images, labels = [], []
    for name in names:
        path = directory / name
        batch = _plain_keys(load_plain_pickle(path), path)
        if "data" not in batch or spec["labels_key"] not in batch:
            raise NbmergeError(f"{path}: a CIFAR batch needs the keys 'data' and {spec['labels_key']!r}, "
                               f"found {sorted(batch)}")
        data = np.asarray(batch["data"], dtype=np.uint8)
        batch_labels = np.asarray(batch[spec["labels_key"]], dtype=np.int64)
        if data.ndim != 2 or data.shape[1] != 3 * 32 * 32 or len(data) != len(batch_labels):
            raise NbmergeError(f"{path}: data has shape {list(data.shape)} and {len(batch_labels)} labels; expected "
                               "[N, 3072] uint8 and N labels")
        _check_labels(manifest, batch_labels, path)
        images.append(data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))  # stored channel-first, row-major
        labels.append(batch_labels)
    return _Source("cifar", directory, np.concatenate(labels), images=np.concatenate(images))


def _read_svhn_source(manifest: dict, root: Path, split: str, looked: list[str]) -> Optional[_Source]:
    spec = manifest["layout"]["svhn_mat"]
    name = spec["files"].get(split)
    if name is None:
        return None
    path = _first_existing([root / d / name for d in spec["dirs"]], looked)
    if path is None:
        return None
    from scipy.io import loadmat  # MATLAB v5 reader: plain arrays only, no code

    try:
        mat = loadmat(path)
        images = np.ascontiguousarray(np.asarray(mat["X"], dtype=np.uint8).transpose(3, 0, 1, 2))
        labels = np.asarray(mat["y"], dtype=np.int64).reshape(-1) % 10  # SVHN labels the digit 0 as 10
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise NbmergeError(f"{path}: not a readable SVHN .mat file ({error})") from None
    if images.shape[1:] != (32, 32, 3) or len(images) != len(labels):
        raise NbmergeError(f"{path}: X has shape {list(images.shape)} (as N,H,W,C) and y {len(labels)} labels")
    _check_labels(manifest, labels, path)
    return _Source("svhn_mat", path.parent, labels, images=images)


def _class_dir_lookup(manifest: dict) -> dict[str, int]:
    lookup: dict[str, int] = {}
    for key in ("class_dirs", "class_dirs_alt"):
        for label, name in enumerate(manifest.get(key, [])):
            lookup.setdefault(normalise_class_dir(name), label)
    return lookup


def _read_imagefolder_source(manifest: dict, root: Path, split: str, looked: list[str],
                             allow_missing_classes: bool) -> Optional[_Source]:
    spec = manifest["layout"]["imagefolder"]
    split_dirs = spec["split_dirs"].get(split)
    if split_dirs is None:
        return None
    folder = None
    for candidate in (root / d / s for d in spec["dirs"] for s in split_dirs):
        looked.append(str(candidate))
        if candidate.is_dir():
            folder = candidate
            break
    if folder is None:
        return None
    lookup, count = _class_dir_lookup(manifest), manifest["num_classes"]
    by_label: dict[int, Path] = {}
    unknown = []
    for entry in sorted(p for p in folder.iterdir() if p.is_dir()):
        label = lookup.get(normalise_class_dir(entry.name))
        if label is None and entry.name.isdigit() and int(entry.name) < count:
            label = int(entry.name)
        if label is None:
            unknown.append(entry.name)
        elif label in by_label:
            raise NbmergeError(f"{manifest['name']}: {by_label[label].name!r} and {entry.name!r} in {folder} both "
                               f"name class {label} ({manifest['class_names'][label]!r})")
        else:
            by_label[label] = entry
    if unknown:
        raise NbmergeError(f"{manifest['name']}: class dirs in {folder} that match no class: {', '.join(unknown[:20])}"
                           f"{' ...' if len(unknown) > 20 else ''}; expected the manifest's class_dirs (e.g. "
                           f"{', '.join(manifest['class_dirs'][:5])}, ...) or label indices 0..{count - 1}")
    files: list[Path] = []
    labels: list[int] = []
    empty = []
    for label in range(count):
        images = _images_under(by_label[label]) if label in by_label else []
        if not images:
            empty.append(label)
        files += images
        labels += [label] * len(images)
    if empty and not allow_missing_classes:
        names = [f"{manifest['class_dirs'][label]!r} (label {label})" for label in empty[:20]]
        raise NbmergeError(f"{manifest['name']}: {folder} has no images for {len(empty)} of {count} classes: "
                           f"{', '.join(names)}{' ...' if len(empty) > 20 else ''}; pass allow_missing_classes=True "
                           "to read it anyway")
    return _Source("imagefolder", folder, np.asarray(labels, dtype=np.int64), files=files)


def _images_under(directory: Path) -> list[Path]:
    """Image files below a class dir, in torchvision ImageFolder's order (sorted walk, sorted names)."""
    found = []
    for current, _, names in sorted(os.walk(directory, followlinks=True)):
        found += [Path(current) / name for name in sorted(names) if name.lower().endswith(IMAGE_EXTENSIONS)]
    return found


def _check_labels(manifest: dict, labels: np.ndarray, path: Path) -> None:
    if len(labels) and (labels.min() < 0 or labels.max() >= manifest["num_classes"]):
        raise NbmergeError(f"{path}: labels span {int(labels.min())}..{int(labels.max())}, {manifest['name']} has "
                           f"{manifest['num_classes']} classes (0..{manifest['num_classes'] - 1})")


def _read_source(manifest: dict, root: Path, split: str, allow_missing_classes: bool) -> _Source:
    looked: list[str] = []
    for fmt in manifest["layout"]["formats"]:
        if fmt == "imagefolder":
            found = _read_imagefolder_source(manifest, root, split, looked, allow_missing_classes)
        else:
            reader = {"idx": _read_idx_source, "cifar": _read_cifar_source, "svhn_mat": _read_svhn_source}[fmt]
            found = reader(manifest, root, split, looked)
        if found is not None:
            return found
    raise NbmergeError(f"{manifest['name']}: no {split!r} data under {root}. Expected "
                       f"{_expected_layouts(manifest, split)}. Looked at: {', '.join(looked)}")


def _expected_layouts(manifest: dict, split: str) -> str:
    layout, options = manifest["layout"], []
    for fmt in layout["formats"]:
        if fmt == "idx" and split in layout["idx"]["files"]:
            names = layout["idx"]["files"][split]
            options.append(f"IDX files {names['images']} and {names['labels']} (raw or .gz) in "
                           f"<root>/{{{', '.join(layout['idx']['dirs'])}}}")
        elif fmt == "cifar" and split in layout["cifar"]["files"]:
            options.append(f"CIFAR pickles {', '.join(layout['cifar']['files'][split])} in "
                           f"<root>/{{{', '.join(layout['cifar']['dirs'])}}}")
        elif fmt == "svhn_mat" and split in layout["svhn_mat"]["files"]:
            dirs = ", ".join(layout["svhn_mat"]["dirs"])
            options.append(f"{layout['svhn_mat']['files'][split]} in <root>/{{{dirs}}}")
        elif fmt == "imagefolder" and split in layout["imagefolder"]["split_dirs"]:
            spec = layout["imagefolder"]
            options.append(f"an ImageFolder tree <root>/{{{', '.join(spec['dirs'])}}}/"
                           f"{{{', '.join(spec['split_dirs'][split])}}}/<class dir>/<images>")
    return " or ".join(options) if options else f"nothing: the manifest has no {split!r} source split"


# ----------------------------------------------------------------------------------------------------------------
# Splits and the dataset

def carve_indices(n: int, spec: dict) -> tuple[np.ndarray, np.ndarray]:
    """(kept, held_out) indices of an n-example source split under a manifest's carve rule.

    Reproduces TSV/task_vectors ``random_split(train, [n - v, v], generator=Generator().manual_seed(seed))`` with
    ``v = min(int(n * fraction), max_size)``: both parts keep the permutation's order."""
    held = int(n * float(spec["fraction"]))
    if spec.get("max_size") is not None:
        held = min(held, int(spec["max_size"]))
    if held <= 0 or held >= n:
        raise NbmergeError(f"cannot carve {spec['fraction']} (at most {spec.get('max_size')}) out of {n} examples")
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(int(spec["seed"]))).numpy()
    return perm[:n - held], perm[n - held:]


def _resolve_split(manifest: dict, split: str) -> tuple[str, Optional[dict], str]:
    """(source split, carve rule or None, which part: "all", "kept" or "held")."""
    splits = manifest["splits"]
    if split == "train_full":
        return splits["train"].get("source", "train"), None, "all"
    if split not in splits:
        raise NbmergeError(f"{manifest['name']}: unknown split {split!r}; splits: {', '.join(SPLITS)}")
    spec = splits[split]
    if "carve_from" in spec:
        return spec["carve_from"], spec, "held"
    if spec.get("held_out"):
        return spec["source"], splits[spec["held_out"]], "kept"
    return spec["source"], None, "all"


class TaskDataset(torch.utils.data.Dataset):
    """One split of a task: ``dataset[i]`` is ``(image, label)``, the image passed through ``preprocess`` (a PIL RGB
    image in, anything out), or a uint8 [3, H, W] tensor without one."""

    def __init__(self, manifest: dict, split: str, source: _Source, indices: Optional[np.ndarray],
                 preprocess: Optional[Callable] = None):
        self.task = manifest["name"]
        self.split = split
        self.class_names = list(manifest["class_names"])
        self.format = source.format
        self.location = source.location
        self.preprocess = preprocess
        self._source = source
        self.indices = np.arange(len(source.labels)) if indices is None else np.asarray(indices)
        self.labels = source.labels[self.indices]

    def __len__(self) -> int:
        return len(self.indices)

    def image(self, i: int) -> Image.Image:
        """The i-th image as an RGB PIL image, before preprocessing."""
        j = int(self.indices[i])
        source = self._source
        if source.files is not None:
            with Image.open(source.files[j]) as image:
                return image.convert("RGB")
        array = source.images[j]
        if source.transpose:
            array = np.ascontiguousarray(array.T)
        return Image.fromarray(array).convert("RGB")

    def __getitem__(self, i: int):
        if not -len(self) <= i < len(self):
            raise IndexError(f"index {i} out of range for {self.task}/{self.split} with {len(self)} examples")
        image = self.image(i % len(self))
        out = self.preprocess(image) if self.preprocess is not None else \
            torch.from_numpy(np.asarray(image).copy()).permute(2, 0, 1)
        return out, int(self.labels[i])

    def __repr__(self) -> str:
        return f"TaskDataset({self.task!r}, split={self.split!r}, n={len(self)}, {self.format} at {self.location})"


def open_task(task: str, data_root: PathLike, split: str = "test", preprocess: Optional[Callable] = None, *,
              allow_missing_classes: bool = False) -> TaskDataset:
    """One split ("train", "val", "test" or "train_full") of a CLIP task read from ``data_root``.

    "val" is the manifest's held-out split: for every task but EuroSAT, a seeded part of the source train split
    (TSV's rule), and "train" is then the rest; "train_full" is the whole source train split. Raises NbmergeError
    naming the task, the expected layouts and every path looked at when the data is not there."""
    manifest = load_task_manifest(task)
    root = Path(data_root).expanduser()
    if not root.is_dir():
        raise NbmergeError(f"{manifest['name']}: data root {root} is not a directory (expected "
                           f"{_expected_layouts(manifest, _resolve_split(manifest, split)[0])} below it)")
    source_split, carve, part = _resolve_split(manifest, split)
    source = _read_source(manifest, root, source_split, allow_missing_classes)
    indices = None
    if carve is not None:
        kept, held = carve_indices(len(source.labels), carve)
        indices = held if part == "held" else kept
    return TaskDataset(manifest, split, source, indices, preprocess)


def preprocess_for(model_name: str) -> Callable:
    """open_clip's evaluation transform for a built-in model config ("ViT-B-32", ...), with no download."""
    import open_clip

    config = open_clip.get_model_config(model_name)
    if config is None:
        known = [name for name in open_clip.list_models() if name.startswith("ViT-")][:12]
        raise NbmergeError(f"open_clip has no built-in config {model_name!r} (e.g. {', '.join(known)})")
    options = config.get("preprocess_cfg", {})
    return open_clip.image_transform(
        config["vision_cfg"].get("image_size", 224), is_train=False,
        mean=tuple(options.get("mean", open_clip.OPENAI_DATASET_MEAN)),
        std=tuple(options.get("std", open_clip.OPENAI_DATASET_STD)),
        resize_mode=options.get("resize_mode"), interpolation=options.get("interpolation"))


def verify_task_files(task: str, data_root: PathLike) -> dict[str, str]:
    """MD5-check every file of the manifest's ``checksums`` found under the task's directories.

    Returns ``{path: "ok"}`` for the files found (files not present are skipped); raises NbmergeError on a
    mismatch, naming the file and both sums."""
    manifest = load_task_manifest(task)
    root = Path(data_root).expanduser()
    layout = manifest["layout"]
    dirs = [d for fmt in layout["formats"] for d in layout[fmt]["dirs"]]
    report = {}
    for entry in manifest.get("checksums", []):
        if not entry.get("md5"):
            continue
        for directory in dict.fromkeys([*dirs, ""]):
            path = root / directory / entry["file"]
            if path.is_file() and str(path) not in report:
                digest = hashlib.md5(usedforsecurity=False)
                with open(path, "rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(block)
                if digest.hexdigest() != entry["md5"]:
                    raise NbmergeError(f"{path}: md5 {digest.hexdigest()}, manifest records {entry['md5']} "
                                       f"({entry.get('from')}); the file is corrupt or a different release")
                report[str(path)] = "ok"
    return report


# ----------------------------------------------------------------------------------------------------------------
# Fake datasets in the manifest layouts, for tests

def fake_colour(label: int, grayscale: bool = False) -> tuple[int, int, int]:
    """The colour of every pixel of a fake image of class ``label`` (so tests can read the label back)."""
    if grayscale:
        value = (label * 9 + 3) % 256  # distinct for up to 28 classes (EMNIST letters: 26)
        return value, value, value
    return label % 256, 40 + 16 * (label // 256), 200


def write_fake_dataset(root: PathLike, task: str, n_per_class: int = 2, image_size: Optional[int] = None,
                       fmt: str = "imagefolder") -> Path:
    """Write a tiny fake copy of ``task`` under ``root`` in one of its manifest layouts and return ``root``.

    fmt: "imagefolder" (PNG files), "idx" or "idx.gz" (MNIST family), "cifar" (CIFAR-10/100) or "svhn_mat". Every
    source split the manifest uses (train and test; also val for EuroSAT) gets ``n_per_class`` images of each class,
    each filled with ``fake_colour(label)``; the classes are interleaved, as in the real files."""
    manifest = load_task_manifest(task)
    if fmt not in FAKE_FORMATS:
        raise NbmergeError(f"unknown fake dataset format {fmt!r}; formats: {', '.join(FAKE_FORMATS)}")
    layout_key = "idx" if fmt.startswith("idx") else fmt
    if layout_key not in manifest["layout"]["formats"]:
        raise NbmergeError(f"{manifest['name']} cannot be stored as {fmt!r}; its formats: "
                           f"{', '.join(manifest['layout']['formats'])}")
    root = Path(root)
    count = manifest["num_classes"]
    labels = np.tile(np.arange(count), n_per_class)
    sources = sorted({spec.get("source", spec.get("carve_from")) for spec in manifest["splits"].values()})
    for split in sources:
        if fmt == "imagefolder":
            size = image_size or 8
            spec = manifest["layout"]["imagefolder"]
            folder = root / spec["dirs"][0] / spec["split_dirs"][split][0]
            for i, label in enumerate(labels):
                target = folder / manifest["class_dirs"][label] / f"{split}_{i:05d}.png"
                target.parent.mkdir(parents=True, exist_ok=True)
                Image.new("RGB", (size, size), fake_colour(int(label))).save(target)
        elif fmt.startswith("idx"):
            size = image_size or 28
            spec = manifest["layout"]["idx"]
            folder = root / min((d for d in spec["dirs"] if d.endswith("/raw")), key=len)
            folder.mkdir(parents=True, exist_ok=True)
            images = np.stack([np.full((size, size), fake_colour(int(label), True)[0], np.uint8) for label in labels])
            if spec.get("transpose"):
                images = np.ascontiguousarray(images.transpose(0, 2, 1))
            stored = (labels + int(spec.get("label_offset", 0))).astype(np.uint8)
            suffix = ".gz" if fmt == "idx.gz" else ""
            _write_idx(folder / (spec["files"][split]["images"] + suffix), images)
            _write_idx(folder / (spec["files"][split]["labels"] + suffix), stored)
        elif fmt == "cifar":
            spec = manifest["layout"]["cifar"]
            folder = root / spec["dirs"][0]
            folder.mkdir(parents=True, exist_ok=True)
            data = np.stack([np.array(fake_colour(int(label)), np.uint8).repeat(32 * 32) for label in labels])
            names = spec["files"][split]
            for name, part in zip(names, np.array_split(np.arange(len(labels)), len(names))):
                batch = {"batch_label": f"fake {name}", spec["labels_key"]: labels[part].tolist(), "data": data[part],
                         "filenames": [f"fake_{i}.png" for i in part]}
                (folder / name).write_bytes(pickle.dumps(batch, protocol=2))
            meta = {spec["meta"]["key"]: list(manifest["class_names"])}
            (folder / spec["meta"]["file"]).write_bytes(pickle.dumps(meta, protocol=2))
        else:
            from scipy.io import savemat

            spec = manifest["layout"]["svhn_mat"]
            folder = root / spec["dirs"][0]
            folder.mkdir(parents=True, exist_ok=True)
            images = np.stack([np.full((32, 32, 3), fake_colour(int(label)), np.uint8) for label in labels])
            savemat(folder / spec["files"][split], {"X": images.transpose(1, 2, 3, 0),
                                                    "y": np.where(labels == 0, 10, labels).reshape(-1, 1)})
    return root


def _write_idx(path: Path, array: np.ndarray) -> None:
    data = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape) + array.tobytes()
    path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)
