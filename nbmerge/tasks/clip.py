"""The CLIP benchmark tasks (the 8/14/20-task suites) read from a user's local data root. Nothing is downloaded.

`data_manifests/clip/<task>.json` records each task's class names in label order, its zero-shot templates (the
task-vectors/TSV ones), its splits (including the seeded rule that carves the validation split out of train, as
TSV does), the local layouts it can be read from and the archive checksums torchvision publishes.
`data_manifests/clip/suites.json` lists the clip-8, clip-14 and clip-20 suites.

`open_task(task, data_root, split, preprocess)` reads one split as a torch Dataset of (image, label) from:

* an ImageFolder tree ``<data_root>/<dir>/<split dir>/<class dir>/*.png|jpg|...`` (every task);
* MNIST-style IDX files, raw or gzipped (MNIST, FashionMNIST, KMNIST, EMNIST letters);
* CIFAR-10/100 python pickles, read by an unpickler that only admits numpy arrays and plain data;
* SVHN's ``*_32x32.mat`` files;
* the other datasets' own formats, laid out as torchvision leaves them after its download and extraction (and as
  TSV's data location holds them): Stanford Cars' devkit .mat annotations, Flowers102's imagelabels.mat/setid.mat,
  Oxford-IIIT Pet's annotation lists, Food-101's meta/*.json, STL-10's binaries, PCAM's HDF5 files (with the
  optional h5py), FER2013's CSV and GTSRB's Training folders plus GT-final_test.csv.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
import pickle
import re
import struct
import warnings
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
FAKE_FORMATS = ("imagefolder", "idx", "idx.gz", "cifar", "svhn_mat", "cars_mat", "flowers_mat", "pets_txt",
                "food101_json", "stl10_bin", "pcam_h5", "fer2013_csv", "gtsrb_ppm")
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
    """``{"suite", "tasks", "num_classes"}`` for "clip-8", "clip-14" or "clip-20" (tasks in suites.json order)."""
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
    from scipy.io.matlab import MatReadError

    try:
        mat = loadmat(path)
        images = np.ascontiguousarray(np.asarray(mat["X"], dtype=np.uint8).transpose(3, 0, 1, 2))
        labels = np.asarray(mat["y"], dtype=np.int64).reshape(-1) % 10  # SVHN labels the digit 0 as 10
    except (OSError, ValueError, KeyError, TypeError, IndexError, MatReadError) as error:
        raise NbmergeError(f"{path}: not a readable SVHN .mat file ({error})") from None
    if images.shape[1:] != (32, 32, 3) or len(images) != len(labels):
        raise NbmergeError(f"{path}: X has shape {list(images.shape)} (as N,H,W,C) and y {len(labels)} labels")
    _check_labels(manifest, labels, path)
    return _Source("svhn_mat", path.parent, labels, images=images)


# The datasets' own on-disk formats, as torchvision stores them after its download and extraction. Each layout block
# in a manifest names the directories tried below the data root ("dirs") and, per source split, the files or folders
# that must all be there ("files"; the first one decides whether a directory holds the split).

_NATIVE_TITLES = {
    "cars_mat": "Stanford Cars devkit files", "flowers_mat": "Oxford Flowers .mat files",
    "pets_txt": "Oxford-IIIT Pet files", "food101_json": "Food-101 files", "stl10_bin": "STL-10 binaries",
    "pcam_h5": "PCAM HDF5 files", "fer2013_csv": "FER2013 CSV", "gtsrb_ppm": "GTSRB files",
}


def _native_alternatives(spec: dict, split: str) -> list[list[str]]:
    """The sets of relative paths that each hold ``split`` in one layout, in order of preference."""
    files = spec.get("files", {})
    if split not in files and split not in spec.get("usage", {}):
        return []
    return [[name] for name in spec.get("combined", [])] + ([list(files[split])] if split in files else [])


def _locate_native(manifest: dict, fmt: str, root: Path, split: str,
                   looked: list[str]) -> Optional[tuple[Path, list[str]]]:
    """(directory, relative paths) of the first complete alternative under ``<root>/<dir>``; None if nothing of the
    layout is there, NbmergeError if a directory holds only part of one."""
    spec = manifest["layout"][fmt]
    alternatives = _native_alternatives(spec, split)
    for directory in (root / d for d in spec["dirs"]):
        partial = None
        for names in alternatives:
            looked += [str(directory / name) for name in names]
            present = [name for name in names if (directory / name).exists()]
            if len(present) == len(names):
                return directory, names
            if present and partial is None:
                partial = (present, [name for name in names if name not in present])
        if partial is not None:
            have, lack = partial
            raise NbmergeError(f"{manifest['name']}: found {', '.join(str(directory / n) for n in have)} but not "
                               f"{', '.join(str(directory / n) for n in lack)}; the {split!r} split needs them all")
    return None


def _file_source(manifest: dict, fmt: str, location: Path, files: list[Path], labels: np.ndarray,
                 listed_in: Path) -> _Source:
    """A _Source of image files named by an annotation file, after checking that they exist."""
    missing = [path for path in files if not path.is_file()]
    if missing:
        raise NbmergeError(f"{manifest['name']}: {len(missing)} of the {len(files)} images listed in {listed_in} are "
                           f"missing, e.g. {', '.join(str(p) for p in missing[:3])}")
    labels = np.asarray(labels, dtype=np.int64)
    _check_labels(manifest, labels, listed_in)
    return _Source(fmt, location, labels, files=files)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise NbmergeError(f"{path}: not a readable text file ({error})") from None


def _loadmat(path: Path, what: str) -> dict:
    from scipy.io import loadmat  # MATLAB v5 reader: plain arrays only, no code
    from scipy.io.matlab import MatReadError

    try:
        return loadmat(path, squeeze_me=True)
    except (OSError, ValueError, TypeError, IndexError, MatReadError) as error:
        raise NbmergeError(f"{path}: not a readable {what} .mat file ({error})") from None


def _read_cars_source(manifest: dict, root: Path, split: str, looked: list[str]) -> Optional[_Source]:
    """StanfordCars: ``<split annotations>.mat`` (1-based ``class``, ``fname``) and ``cars_<split>/<fname>``."""
    found = _locate_native(manifest, "cars_mat", root, split, looked)
    if found is None:
        return None
    directory, (annotations_name, images_name) = found
    spec, path = manifest["layout"]["cars_mat"], directory / annotations_name
    try:
        annotations = np.atleast_1d(_loadmat(path, "Stanford Cars annotations")["annotations"])
        labels = np.asarray(annotations["class"], dtype=np.int64).reshape(-1) - 1
        names = [str(name) for name in annotations["fname"].reshape(-1)]
    except (KeyError, ValueError, TypeError, IndexError) as error:
        raise NbmergeError(f"{path}: expected a struct array 'annotations' with fields 'class' and 'fname' "
                           f"({type(error).__name__}: {error})") from None
    meta_path = directory / spec["meta"]
    if meta_path.exists():
        try:
            recorded = [str(name) for name in np.atleast_1d(_loadmat(meta_path, "Stanford Cars meta")["class_names"])]
        except KeyError:
            raise NbmergeError(f"{meta_path}: no 'class_names' array") from None
        if [normalise_class_dir(n) for n in recorded] != [normalise_class_dir(n) for n in manifest["class_names"]]:
            raise NbmergeError(f"{manifest['name']}: class names in {meta_path} ({recorded[:3]}...) differ from the "
                               f"manifest's ({manifest['class_names'][:3]}...)")
    return _file_source(manifest, "cars_mat", directory, [directory / images_name / n for n in names], labels, path)


def _read_flowers_source(manifest: dict, root: Path, split: str, looked: list[str]) -> Optional[_Source]:
    """Flowers102: ``setid.mat`` (1-based image ids per split), ``imagelabels.mat`` (1-based labels of every image)
    and ``jpg/image_%05d.jpg``; the split keeps setid's order."""
    found = _locate_native(manifest, "flowers_mat", root, split, looked)
    if found is None:
        return None
    directory, (setid_name, labels_name, _) = found
    spec = manifest["layout"]["flowers_mat"]
    setid_path, labels_path = directory / setid_name, directory / labels_name
    key = spec["set_keys"][split]
    try:
        ids = np.atleast_1d(_loadmat(setid_path, "Flowers102 setid")[key]).astype(np.int64).reshape(-1)
    except (KeyError, ValueError, TypeError) as error:
        raise NbmergeError(f"{setid_path}: no integer array {key!r} ({type(error).__name__}: {error})") from None
    try:
        every = np.atleast_1d(_loadmat(labels_path, "Flowers102 labels")["labels"]).astype(np.int64).reshape(-1) - 1
    except (KeyError, ValueError, TypeError) as error:
        raise NbmergeError(f"{labels_path}: no integer array 'labels' ({type(error).__name__}: {error})") from None
    if len(ids) and (ids.min() < 1 or ids.max() > len(every)):
        raise NbmergeError(f"{setid_path}: {key!r} holds image ids {int(ids.min())}..{int(ids.max())}, {labels_path} "
                           f"labels images 1..{len(every)}")
    files = [directory / spec["image_name"].format(i) for i in ids.tolist()]
    return _file_source(manifest, "flowers_mat", directory, files, every[ids - 1], setid_path)


def _read_pets_source(manifest: dict, root: Path, split: str, looked: list[str]) -> Optional[_Source]:
    """OxfordIIITPet: ``annotations/<split>.txt`` lines ``<image id> <class id 1..37> <species> <breed id>`` and
    ``images/<image id>.jpg``; the image id's prefix must name the class."""
    found = _locate_native(manifest, "pets_txt", root, split, looked)
    if found is None:
        return None
    directory, (list_name, images_name) = found
    path, lookup = directory / list_name, _class_dir_lookup(manifest)
    files, labels = [], []
    for number, line in enumerate(_read_text(path).splitlines(), 1):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        try:
            label = int(parts[1]) - 1
        except (IndexError, ValueError):
            raise NbmergeError(f"{path}, line {number}: expected '<image id> <class id> ...', found "
                               f"{line.strip()[:80]!r}") from None
        breed = lookup.get(normalise_class_dir(parts[0].rsplit("_", 1)[0]))
        if breed != label and 0 <= label < manifest["num_classes"]:
            raise NbmergeError(f"{path}, line {number}: image {parts[0]!r} has class id {label + 1}, which is "
                               f"{manifest['class_dirs'][label]!r} in the manifest's order; the file or the "
                               "manifest is wrong")
        files.append(directory / images_name / f"{parts[0]}.jpg")
        labels.append(label)
    return _file_source(manifest, "pets_txt", directory, files, np.asarray(labels, np.int64), path)


def _read_food101_source(manifest: dict, root: Path, split: str, looked: list[str]) -> Optional[_Source]:
    """Food101: ``meta/<split>.json`` ``{class: ["<class>/<id>", ...]}`` and ``images/<class>/<id>.jpg``, in the
    json's order (torchvision's); classes are matched to labels by name."""
    found = _locate_native(manifest, "food101_json", root, split, looked)
    if found is None:
        return None
    directory, (list_name, images_name) = found
    path, lookup = directory / list_name, _class_dir_lookup(manifest)
    try:
        with open(path, encoding="utf-8") as handle:
            listing = json.load(handle)
    except (OSError, json.JSONDecodeError) as error:
        raise NbmergeError(f"{path}: not a readable JSON file ({error})") from None
    if not isinstance(listing, dict) or not all(isinstance(v, list) for v in listing.values()):
        raise NbmergeError(f"{path}: expected a JSON object of class name -> list of '<class>/<image id>'")
    unknown = [name for name in listing if normalise_class_dir(name) not in lookup]
    if unknown:
        raise NbmergeError(f"{path}: classes that match no class of {manifest['name']}: {', '.join(unknown[:10])}")
    files, labels = [], []
    for name, items in listing.items():
        files += [directory / images_name / f"{item}.jpg" for item in items]
        labels += [lookup[normalise_class_dir(name)]] * len(items)
    return _file_source(manifest, "food101_json", directory, files, np.asarray(labels, np.int64), path)


def _read_stl10_source(manifest: dict, root: Path, split: str, looked: list[str]) -> Optional[_Source]:
    """STL10: ``<split>_X.bin`` (uint8, each image channel-major and column-major) and ``<split>_y.bin`` (uint8
    labels 1..10), memory-mapped."""
    found = _locate_native(manifest, "stl10_bin", root, split, looked)
    if found is None:
        return None
    directory, (images_name, labels_name) = found
    spec = manifest["layout"]["stl10_bin"]
    images_path, labels_path = directory / images_name, directory / labels_name
    labels = np.fromfile(labels_path, dtype=np.uint8).astype(np.int64) - int(spec.get("label_offset", 0))
    channels, height, width = spec["image_shape"]
    per_image, size = channels * height * width, images_path.stat().st_size
    if size != per_image * len(labels):
        raise NbmergeError(f"{images_path}: {size} bytes, expected {len(labels)} images of {per_image} bytes "
                           f"({channels}x{height}x{width}) for the {len(labels)} labels in {labels_path}; one of the "
                           "two is truncated or corrupt")
    _check_labels(manifest, labels, labels_path)
    if not len(labels):
        raise NbmergeError(f"{labels_path}: no labels")
    _check_stl10_class_names(manifest, directory)
    stored = np.memmap(images_path, dtype=np.uint8, mode="r", shape=(len(labels), channels, width, height))
    return _Source("stl10_bin", directory, labels, images=stored.transpose(0, 3, 2, 1))  # -> [N, H, W, C]


def _check_stl10_class_names(manifest: dict, directory: Path) -> None:
    path = directory / manifest["layout"]["stl10_bin"]["class_names_file"]
    if path.is_file():
        recorded = _read_text(path).split()
        if recorded != manifest["class_names"]:
            raise NbmergeError(f"{manifest['name']}: class names in {path} ({recorded[:5]}...) differ from the "
                               f"manifest's ({manifest['class_names'][:5]}...)")


def _import_h5py(path: Path):
    try:
        import h5py
    except ImportError:
        raise NbmergeError(f"{path}: reading PCAM's HDF5 files needs h5py, which is not installed; run `pip install "
                           "h5py` (or export PCAM to an ImageFolder tree)") from None
    return h5py


class _H5Images:
    """The rows of an HDF5 dataset, read one at a time (PCAM's train images are 7 GB); the file is opened on first
    use in each process, so the object can go to DataLoader workers."""

    def __init__(self, path: Path, key: str, shape: tuple[int, ...]):
        self.path, self.key, self.shape = path, key, shape
        self._handle, self._pid = None, None

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, i: int) -> np.ndarray:
        if self._handle is None or self._pid != os.getpid():
            self._handle, self._pid = _import_h5py(self.path).File(self.path, "r"), os.getpid()
        return np.asarray(self._handle[self.key][i], dtype=np.uint8)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_handle": None, "_pid": None}


def _read_pcam_source(manifest: dict, root: Path, split: str, looked: list[str]) -> Optional[_Source]:
    """PCAM: ``..._split_<split>_x.h5`` (dataset x: uint8 [N, 96, 96, 3]) and ``..._y.h5`` (y: [N, 1, 1, 1]); needs
    h5py, which is optional."""
    found = _locate_native(manifest, "pcam_h5", root, split, looked)
    if found is None:
        return None
    directory, (images_name, labels_name) = found
    spec = manifest["layout"]["pcam_h5"]
    images_path, labels_path = directory / images_name, directory / labels_name
    h5py = _import_h5py(images_path)
    try:
        with h5py.File(labels_path, "r") as handle:
            labels = np.asarray(handle[spec["labels_key"]][()], dtype=np.int64).reshape(-1)
    except (OSError, KeyError, ValueError, TypeError) as error:
        raise NbmergeError(f"{labels_path}: no readable dataset {spec['labels_key']!r} ({error})") from None
    try:
        with h5py.File(images_path, "r") as handle:
            dataset = handle[spec["images_key"]]
            shape, dtype = tuple(dataset.shape), dataset.dtype
    except (OSError, KeyError, ValueError, TypeError) as error:
        raise NbmergeError(f"{images_path}: no readable dataset {spec['images_key']!r} ({error})") from None
    if len(shape) != 4 or shape[3] != 3 or dtype != np.uint8 or shape[0] != len(labels):
        raise NbmergeError(f"{images_path}: {spec['images_key']!r} is {dtype} {list(shape)}, expected uint8 "
                           f"[{len(labels)}, H, W, 3] for the {len(labels)} labels in {labels_path}")
    _check_labels(manifest, labels, labels_path)
    return _Source("pcam_h5", directory, labels, images=_H5Images(images_path, spec["images_key"], shape))


def _read_fer2013_source(manifest: dict, root: Path, split: str, looked: list[str]) -> Optional[_Source]:
    """FER2013, as torchvision reads it: ``fer2013.csv`` (emotion,pixels,Usage) or ``icml_face_data.csv`` (the same
    with ' Usage', ' pixels'), else ``<split>.csv``. Images are 48x48 grayscale, pixels space-separated, row-major.

    The test split is Usage PublicTest + PrivateTest (7,178 rows) in file order: torchvision's FER2013 'test', and
    the 7,178-image test split of HF Jeneral/fer-2013 that TSV (via TALL masks' src/datasets/fer2013.py) evaluates
    on, and of the Kaggle image-folder release; train is Usage Training (28,709)."""
    found = _locate_native(manifest, "fer2013_csv", root, split, looked)
    if found is None:
        return None
    directory, (name,) = found
    spec, path = manifest["layout"]["fer2013_csv"], directory / name
    usages = set(spec["usage"][split]) if name in spec.get("combined", []) else None
    known = {usage for names in spec["usage"].values() for usage in names}
    side = int(spec["image_size"])
    images, labels = [], []
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            header = [column.strip() for column in next(reader, [])]
            needed = ["emotion", "pixels"] + (["Usage"] if usages else [])
            absent = [column for column in needed if column not in header]
            if absent:
                hint = ("; Kaggle's test.csv carries no labels: put fer2013.csv or icml_face_data.csv (which label "
                        f"the PublicTest and PrivateTest rows) in {directory}") if absent == ["emotion"] else ""
                raise NbmergeError(f"{path}: lacks the column(s) {', '.join(absent)} (found: "
                                   f"{', '.join(header) or 'none'}){hint}")
            at = {column: header.index(column) for column in needed}
            for number, row in enumerate(reader, 2):
                if not row:
                    continue
                if len(row) != len(header):
                    raise NbmergeError(f"{path}, line {number}: {len(row)} fields, the header has {len(header)}; the "
                                       "file is truncated or corrupt")
                if usages and row[at["Usage"]].strip() not in usages:
                    if row[at["Usage"]].strip() not in known:
                        raise NbmergeError(f"{path}, line {number}: Usage {row[at['Usage']]!r} is none of "
                                           f"{', '.join(sorted(known))}; the file is truncated or corrupt")
                    continue
                label, image = _parse_fer_row(row, at, side)
                if image is None:
                    raise NbmergeError(f"{path}, line {number}: expected an emotion id and {side * side} pixel "
                                       f"values 0..255, found {','.join(row)[:60]!r}...")
                images.append(image)
                labels.append(label)
    except (UnicodeDecodeError, csv.Error) as error:
        raise NbmergeError(f"{path}: not a readable CSV file ({error})") from None
    if not labels:
        raise NbmergeError(f"{path}: no {split!r} rows" + (f" (Usage {', '.join(sorted(usages))})" if usages else ""))
    labels_array = np.asarray(labels, dtype=np.int64)
    _check_labels(manifest, labels_array, path)
    return _Source("fer2013_csv", directory, labels_array, images=np.stack(images))


def _parse_fer_row(row: list[str], at: dict[str, int], side: int) -> tuple[int, Optional[np.ndarray]]:
    """(emotion, uint8 [side, side] image) of one FER2013 CSV row; the image is None when the row is malformed."""
    try:
        label = int(row[at["emotion"]])
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # numpy warns, rather than fails, on text it cannot parse
            pixels = np.fromstring(row[at["pixels"]], dtype=np.int64, sep=" ")
    except (IndexError, ValueError, DeprecationWarning):
        return -1, None
    if pixels.size != side * side or pixels.min() < 0 or pixels.max() > 255:
        return label, None
    return label, pixels.astype(np.uint8).reshape(side, side)


def _read_gtsrb_source(manifest: dict, root: Path, split: str, looked: list[str]) -> Optional[_Source]:
    """GTSRB: train is ``GTSRB/Training/000NN/*.ppm`` (class = folder number, torchvision's sorted order); test is
    the flat ``GTSRB/Final_Test/Images`` with labels in ``GT-final_test.csv`` (';'-separated Filename, ClassId)."""
    found = _locate_native(manifest, "gtsrb_ppm", root, split, looked)
    if found is None:
        return None
    directory, names = found
    if split == "train":
        folder = directory / names[0]
        files, labels = [], []
        for entry in sorted(p for p in folder.iterdir() if p.is_dir()):
            if not entry.name.isdigit():
                raise NbmergeError(f"{manifest['name']}: {entry} is not a class folder (expected 00000..00042)")
            images = [p for p in _images_under(entry) if p.suffix.lower() == ".ppm"]
            files += images
            labels += [int(entry.name)] * len(images)
        if not files:
            raise NbmergeError(f"{manifest['name']}: no .ppm images in class folders under {folder}")
        return _file_source(manifest, "gtsrb_ppm", folder, files, np.asarray(labels, np.int64), folder)
    path, folder = directory / names[0], directory / names[1]
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle, delimiter=";", skipinitialspace=True)
            columns = [column.strip() for column in reader.fieldnames or []]
            if "Filename" not in columns or "ClassId" not in columns:
                raise NbmergeError(f"{path}: needs the ';'-separated columns Filename and ClassId, found "
                                   f"{', '.join(columns) or 'none'}")
            reader.fieldnames = columns
            try:
                rows = [(row["Filename"], int(row["ClassId"])) for row in reader]
            except (TypeError, ValueError) as error:
                raise NbmergeError(f"{path}, line {reader.line_num}: bad row ({error})") from None
    except (UnicodeDecodeError, csv.Error) as error:
        raise NbmergeError(f"{path}: not a readable CSV file ({error})") from None
    return _file_source(manifest, "gtsrb_ppm", folder, [folder / name for name, _ in rows],
                        np.asarray([label for _, label in rows], np.int64), path)


_NATIVE_READERS = {
    "cars_mat": _read_cars_source, "flowers_mat": _read_flowers_source, "pets_txt": _read_pets_source,
    "food101_json": _read_food101_source, "stl10_bin": _read_stl10_source, "pcam_h5": _read_pcam_source,
    "fer2013_csv": _read_fer2013_source, "gtsrb_ppm": _read_gtsrb_source,
}


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
            reader = {"idx": _read_idx_source, "cifar": _read_cifar_source, "svhn_mat": _read_svhn_source,
                      **_NATIVE_READERS}[fmt]
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
        elif fmt in _NATIVE_TITLES and _native_alternatives(layout[fmt], split):
            alternatives = " or ".join(" + ".join(names) for names in _native_alternatives(layout[fmt], split))
            options.append(f"{_NATIVE_TITLES[fmt]} {alternatives} in <root>/{{{', '.join(layout[fmt]['dirs'])}}}")
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

    fmt: "imagefolder" (PNG files), "idx" or "idx.gz" (MNIST family), "cifar" (CIFAR-10/100), "svhn_mat", or a
    dataset's own format: "cars_mat", "flowers_mat", "pets_txt", "food101_json", "stl10_bin", "pcam_h5" (needs
    h5py), "fer2013_csv" (grayscale, fer2013.csv) or "gtsrb_ppm". Every source split the manifest uses (train and
    test; also val for EuroSAT; Flowers102's setid.mat also gets its official val) gets ``n_per_class`` images of
    each class, each filled with ``fake_colour(label)`` (grayscale for FER2013 and the MNIST family); the classes
    are interleaved, as in the real files. Fake ".jpg" files hold PNG data, so colours survive exactly. STL10, PCAM
    and FER2013 keep their formats' fixed sizes (96, 96, 48); ``image_size`` sizes the others."""
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
    if fmt in _NATIVE_READERS:
        _write_fake_native(manifest, root, fmt, labels, sources, image_size or 8)
        return root
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


def _fake_image(path: Path, label: int, size: int) -> None:
    """A one-colour RGB image at ``path``. Always PNG data, whatever the name says (PIL reads by content): JPEG
    would not keep the colour exact."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (size, size), fake_colour(label)).save(path, format="PNG")


def _write_fake_native(manifest: dict, root: Path, fmt: str, labels: np.ndarray, splits: list[str],
                       size: int) -> None:
    """write_fake_dataset for the datasets' own formats (``_NATIVE_READERS``), every source split at once."""
    from scipy.io import savemat

    spec = manifest["layout"][fmt]
    folder = root / spec["dirs"][0]
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "cars_mat":
        (folder / spec["meta"]).parent.mkdir(parents=True, exist_ok=True)
        savemat(folder / spec["meta"], {"class_names": np.array(manifest["class_names"], dtype=object)})
        for split in splits:
            annotations_name, images_name = spec["files"][split]
            table = np.zeros(len(labels), dtype=[("bbox_x1", "O"), ("bbox_y1", "O"), ("bbox_x2", "O"),
                                                 ("bbox_y2", "O"), ("class", "O"), ("fname", "O")])
            for i, label in enumerate(labels):
                name = f"{i + 1:05d}.jpg"
                table[i] = (0, 0, size - 1, size - 1, np.uint8(label + 1), name)
                _fake_image(folder / images_name / name, int(label), size)
            (folder / annotations_name).parent.mkdir(parents=True, exist_ok=True)
            savemat(folder / annotations_name, {"annotations": table.reshape(1, -1)})
    elif fmt == "flowers_mat":
        every, ids = [], {}
        for split in ("train", "val", "test"):  # setid.mat always has all three official splits
            ids[spec["set_keys"][split]] = np.arange(len(every) + 1, len(every) + len(labels) + 1).reshape(1, -1)
            every += labels.tolist()
        for i, label in enumerate(every, 1):
            _fake_image(folder / spec["image_name"].format(i), int(label), size)
        savemat(folder / spec["files"]["train"][0], ids)
        savemat(folder / spec["files"]["train"][1], {"labels": (np.array(every) + 1).reshape(1, -1)})
    elif fmt == "pets_txt":
        for split in splits:
            list_name, images_name = spec["files"][split]
            lines = []
            for i, label in enumerate(labels):
                image_id = f"{manifest['class_dirs'][label]}_{split}{i}"
                lines.append(f"{image_id} {label + 1} 1 1\n")
                _fake_image(folder / images_name / f"{image_id}.jpg", int(label), size)
            (folder / list_name).parent.mkdir(parents=True, exist_ok=True)
            (folder / list_name).write_text("".join(lines))
    elif fmt == "food101_json":
        for split in splits:
            list_name, images_name = spec["files"][split]
            listing: dict[str, list[str]] = {name: [] for name in manifest["class_dirs"]}
            for i, label in enumerate(labels):
                item = f"{manifest['class_dirs'][label]}/{split}{i}"
                listing[manifest["class_dirs"][label]].append(item)
                _fake_image(folder / images_name / f"{item}.jpg", int(label), size)
            (folder / list_name).parent.mkdir(parents=True, exist_ok=True)
            (folder / list_name).write_text(json.dumps(listing))
    elif fmt == "stl10_bin":
        channels, height, width = spec["image_shape"]
        (folder / spec["class_names_file"]).write_text("\n".join(manifest["class_names"]) + "\n")
        for split in splits:
            images_name, labels_name = spec["files"][split]
            upright = np.stack([np.full((height, width, channels), fake_colour(int(label)), np.uint8)
                                for label in labels])
            (folder / images_name).write_bytes(np.ascontiguousarray(upright.transpose(0, 3, 2, 1)).tobytes())
            (folder / labels_name).write_bytes((labels + int(spec.get("label_offset", 0))).astype(np.uint8).tobytes())
    elif fmt == "pcam_h5":
        h5py = _import_h5py(folder)
        for split in splits:
            images_name, labels_name = spec["files"][split]
            images = np.stack([np.full((96, 96, 3), fake_colour(int(label)), np.uint8) for label in labels])
            with h5py.File(folder / images_name, "w") as handle:
                handle.create_dataset(spec["images_key"], data=images)
            with h5py.File(folder / labels_name, "w") as handle:
                handle.create_dataset(spec["labels_key"], data=labels.astype(np.uint8).reshape(-1, 1, 1, 1))
    elif fmt == "fer2013_csv":
        side, rows = int(spec["image_size"]), ["emotion,pixels,Usage"]
        for split in sorted(splits, reverse=True):  # Training rows first, as in the real file
            usages = spec["usage"][split]
            for i, label in enumerate(labels):
                pixels = " ".join([str(fake_colour(int(label), True)[0])] * (side * side))
                rows.append(f'{label},"{pixels}",{usages[i % len(usages)]}')
        (folder / spec["combined"][0]).write_text("\n".join(rows) + "\n")
    elif fmt == "gtsrb_ppm":
        for split in splits:
            names = spec["files"][split]
            if split == "train":
                for i, label in enumerate(labels):
                    _save_ppm(folder / names[0] / f"{label:05d}" / f"00000_{i:05d}.ppm", int(label), size)
                continue
            rows = ["Filename;Width;Height;Roi.X1;Roi.Y1;Roi.X2;Roi.Y2;ClassId"]
            for i, label in enumerate(labels):
                _save_ppm(folder / names[1] / f"{i:05d}.ppm", int(label), size)
                rows.append(f"{i:05d}.ppm;{size};{size};0;0;{size - 1};{size - 1};{label}")
            (folder / names[0]).write_text("\n".join(rows) + "\n")


def _save_ppm(path: Path, label: int, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (size, size), fake_colour(label)).save(path, format="PPM")


def _write_idx(path: Path, array: np.ndarray) -> None:
    data = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape) + array.tobytes()
    path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)
