"""Offline, deterministic 28×28 image tasks for the embedded zoo, and the pool its base is pretrained on.

Every image comes from files that a Debian or PyPI package installs, so a fresh machine with no network builds the
same arrays: Fashion-MNIST (Debian `dataset-fashion-mnist`), scikit-learn's handwritten digits, scikit-image's
texture photographs and faces-vs-non-faces, and one writing system per task rendered with Pillow from Debian font
packages. docs/zoo.md gives the recipes and why they were chosen.

`data_manifests/` records, per task, the source packages and files (sha256), the recipe with its seeds, the split
sizes, the class names and the sha256 of every generated array. `build_task(name)` rebuilds a task and checks it
against that record; `write_manifests()` (a maintainer command) rewrites the record from the current builders.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import tempfile
import zlib
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont, features

from ..errors import NbmergeError
from ..engine.io import sha256_file

IMAGE_SIZE = 28
RENDER_SIZE = 64  # glyphs are drawn and warped at 64 px, then downsampled (anti-aliased) to IMAGE_SIZE
# Per face, glyphs are scaled by one factor so that the task's median glyph spans GLYPH_MEDIAN px, keeping relative
# sizes (Hebrew yod vs vav, Arabic ر vs ب); glyphs that would exceed GLYPH_BOX are shrunk to it, so that a warped
# glyph (scale 1.1, 12% shift) stays on the 64 px canvas. Scaling to the largest glyph instead left Thai consonants
# (next to the descending ญ) too small to read at 28 px.
GLYPH_MEDIAN = 38
GLYPH_BOX = 44
FONT_PIXELS = 48  # FreeType size; glyphs are rescaled afterwards, so only hinting and anti-aliasing depend on it
DATA_SEED = 1202  # root of every seed below: SeedSequence([DATA_SEED, crc32(task name), stream])
SPLITS = ("train", "val", "test")
_STREAMS = {"train": 0, "val": 1, "test": 2, "sources": 3}  # "sources" partitions real images between splits
MANIFEST_FORMAT = 1

# Images per class and split. Small enough that the whole tiny20 zoo's data builds in well under a minute.
PER_CLASS = {"train": 300, "val": 100, "test": 200}

# Everything a glyph task may draw from (docs/zoo.md).
FONT_PACKAGES = ("fonts-noto-core", "fonts-noto-cjk", "fonts-dejavu-core", "fonts-liberation", "fonts-freefont-ttf",
                 "fonts-urw-base35")
# Two faces whose glyphs differ by less than this mean absolute difference (0-255, on 16×16 thumbnails of the 64 px
# renders) are one design: Noto's script fonts share Noto Sans' digits at 0.0-1.0, distinct designs differ by > 2.
SAME_DESIGN = 2.0
# Faces whose cmap claims characters they draw as something else: URW Dingbats maps ASCII to ornaments and
# Standard Symbols PS maps Latin letters to Greek ones (its 'C' is a chi, its 'D' a delta).
EXCLUDED_FONTS = frozenset({"D050000L.otf", "StandardSymbolsPS.otf"})


class DataSourceError(NbmergeError):
    """A data source is missing (the message names the Debian or PyPI package to install) or does not match the
    checksums in data_manifests/ (the message names the file or array and both hashes)."""


@dataclass(frozen=True, eq=False)  # eq=False: numpy arrays have no single truth value
class TaskData:
    """One task's images (uint8 [N, 28, 28], white on black) and labels (int64 [N]) for each split."""

    name: str
    class_names: tuple[str, ...]
    train_x: np.ndarray
    train_y: np.ndarray
    val_x: np.ndarray
    val_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray

    @property
    def num_classes(self) -> int:
        return len(self.class_names)

    def arrays(self) -> dict[str, np.ndarray]:
        return {f"{split}_{part}": getattr(self, f"{split}_{part}") for split in SPLITS for part in ("x", "y")}


@dataclass(frozen=True)
class Augment:
    """Random warp and photometric jitter, drawn independently per image (docs/zoo.md's glyph recipe by default)."""

    rotation_deg: float = 15.0
    scale: tuple[float, float] = (0.75, 1.1)
    shear: float = 0.2
    shift: float = 0.12  # fraction of the image side, per axis
    # -1: 3×3 erosion, 0: as drawn, 1: 3×3 dilation, at 64 px. A 5×5 dilation fills bold CJK and Hangul into blobs.
    stroke_weights: tuple[int, ...] = (-1, 0, 1)
    hflip: bool = False
    background: tuple[float, float] = (0.0, 0.25)  # intensity of black, drawn per image
    foreground: tuple[float, float] = (0.6, 1.0)  # intensity of white, drawn per image
    noise: tuple[float, float] = (0.0, 0.08)  # std of Gaussian pixel noise, drawn per image


GLYPH_AUGMENT = Augment()
# Photographs fill the frame: zoom in only (no black corners), mild warp, mirror images are still faces.
FACES_AUGMENT = Augment(rotation_deg=10.0, scale=(1.0, 1.2), shear=0.05, shift=0.06, stroke_weights=(0,), hflip=True,
                        background=(0.0, 0.15), foreground=(0.75, 1.0), noise=(0.0, 0.05))


@dataclass(frozen=True)
class TextureRecipe:
    """Random square crops of each photograph, from a column band reserved for one split, resized to 28 px."""

    bands: tuple[float, ...] = (0.0, 0.6, 0.75, 1.0)  # column fractions: train | val | test
    crop: tuple[int, int] = (28, 48)  # side in source pixels, inclusive
    hflip: bool = True
    gain: tuple[float, float] = (0.7, 1.3)  # contrast about the crop's mean
    offset: tuple[float, float] = (-0.1, 0.1)
    noise: tuple[float, float] = (0.0, 0.04)


TEXTURE_RECIPE = TextureRecipe()
# Fraction of the real source images (digits, faces) given to train / val / test before augmentation, so that no
# source image feeds two splits.
SOURCE_FRACTIONS = (0.6, 0.15, 0.25)


@dataclass(frozen=True)
class TaskSpec:
    """What a task is: its classes, where its images come from, and the function that builds it."""

    name: str
    class_names: tuple[str, ...]
    source: str
    builder: Callable[["TaskSpec"], "_Built"]
    chars: str = ""  # glyph tasks: the characters drawn, one class each

    @property
    def num_classes(self) -> int:
        return len(self.class_names)


@dataclass(frozen=True)
class FontFace:
    path: str
    index: int  # face within a .ttc collection
    package: str

    @property
    def label(self) -> str:
        return os.path.basename(self.path) + (f"#{self.index}" if self.index else "")


@dataclass
class _Built:
    arrays: dict[str, np.ndarray]
    class_names: tuple[str, ...]
    debian: dict[str, str]  # package -> version
    pypi: dict[str, str]  # distribution -> version
    files: list[dict]  # {"path", "package", "sha256"[, "face_index"]}
    recipe: dict


# ----------------------------------------------------------------------------------------------------------------
# Source lookups. Each raises DataSourceError naming the package to install; tests monkeypatch the two probes.

@lru_cache(maxsize=None)
def _dpkg_query(package: str) -> tuple[str, tuple[str, ...]] | None:
    """(version, files) of an installed Debian package, or None when it (or dpkg itself) is absent."""
    try:
        status = subprocess.run(["dpkg-query", "-W", "-f=${db:Status-Status}\t${Version}", package],
                                capture_output=True, text=True, check=False)
    except FileNotFoundError:
        return None
    if status.returncode != 0 or not status.stdout.startswith("installed\t"):
        return None
    listing = subprocess.run(["dpkg-query", "-L", package], capture_output=True, text=True, check=False)
    return status.stdout.split("\t", 1)[1].strip(), tuple(listing.stdout.splitlines())


def _debian_package(package: str) -> tuple[str, tuple[str, ...]]:
    found = _dpkg_query(package)
    if found is None:
        raise DataSourceError(f"Debian package {package} is not installed; it is a zoo data source: "
                              f"apt-get install {package}")
    return found


def _find_module(module: str):
    return importlib.util.find_spec(module)


def _pypi_package(distribution: str, module: str) -> tuple[str, Path]:
    """(version, package folder) of an installed PyPI distribution, found without importing it."""
    spec = _find_module(module)
    if spec is None or not spec.submodule_search_locations:
        raise DataSourceError(f"PyPI package {distribution} (module {module}) is not installed; it is a zoo data "
                              f"source: pip install {distribution}")
    return importlib.metadata.version(distribution), Path(list(spec.submodule_search_locations)[0])


_hash_cache: dict[tuple[str, int, int], str] = {}


def _sha256_file(path: str | Path) -> str:
    stat = os.stat(path)
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _hash_cache:
        _hash_cache[key] = sha256_file(path)
    return _hash_cache[key]


def _sha256_array(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def _source_file(path: str | Path, package: str, *, root: Path | None = None, **extra) -> dict:
    """A source file's record. Files of a PyPI package are named relative to its site-packages (`root` is the
    package folder), so that a manifest holds in any virtual environment."""
    if not os.path.isfile(path):
        raise DataSourceError(f"source file {path} of package {package} is missing; reinstall it: "
                              + _install_hint(package))
    name = Path(path).relative_to(root.parent).as_posix() if root is not None else str(path)
    return {"path": name, "package": package, "sha256": _sha256_file(path), **extra}


def _install_hint(package: str) -> str:
    return f"apt-get install --reinstall {package}" if package in _DEBIAN_SOURCES else f"pip install {package}"


_DEBIAN_SOURCES = frozenset(FONT_PACKAGES) | {"dataset-fashion-mnist"}


def _toolchain() -> dict[str, str]:
    """Libraries whose output the arrays depend on (recorded so that a mismatch can be explained)."""
    return {"numpy": np.__version__, "Pillow": importlib.metadata.version("Pillow"),
            "freetype": features.version("freetype2") or "absent",
            "fonttools": importlib.metadata.version("fonttools")}


def _rng(name: str, stream: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(_seed(name, stream)))


def _seed(name: str, stream: str) -> list[int]:
    return [DATA_SEED, zlib.crc32(name.encode()), _STREAMS[stream]]


# ----------------------------------------------------------------------------------------------------------------
# Augmentation: one warp per image through Pillow, everything else vectorised.

def _apply_stroke_weight(image: Image.Image, weight: int) -> Image.Image:
    if weight == 0:
        return image
    if weight > 0:
        return image.filter(ImageFilter.MaxFilter(2 * weight + 1))
    eroded = image.filter(ImageFilter.MinFilter(3))
    # Hairline faces vanish under erosion; keep them as drawn rather than emit a blank image.
    return eroded if np.asarray(eroded, np.float32).sum() >= 0.5 * np.asarray(image, np.float32).sum() else image


def _weight_variants(images: np.ndarray, weights: tuple[int, ...]) -> np.ndarray:
    """uint8 [K, 64, 64] -> uint8 [K * len(weights), 64, 64], variants of one image adjacent."""
    out = np.empty((len(images), len(weights), RENDER_SIZE, RENDER_SIZE), np.uint8)
    for k, image in enumerate(images):
        pil = Image.fromarray(image)
        for j, weight in enumerate(weights):
            out[k, j] = np.asarray(_apply_stroke_weight(pil, weight))
    return out.reshape(-1, RENDER_SIZE, RENDER_SIZE)


def _augment(sources: np.ndarray, picks: np.ndarray, aug: Augment, rng: np.random.Generator) -> np.ndarray:
    """Warp sources[picks] (uint8 [K, 64, 64]) at random and downsample to uint8 [N, 28, 28]."""
    n = len(picks)
    theta = np.deg2rad(rng.uniform(-aug.rotation_deg, aug.rotation_deg, n))
    scale = rng.uniform(*aug.scale, n)
    shear = rng.uniform(-aug.shear, aug.shear, n)
    shift = rng.uniform(-aug.shift, aug.shift, (n, 2)) * RENDER_SIZE
    mirror = np.where(rng.random(n) < 0.5, -1.0, 1.0) if aug.hflip else np.ones(n)
    low = rng.uniform(*aug.background, n).astype(np.float32)
    high = rng.uniform(*aug.foreground, n).astype(np.float32)
    sigma = rng.uniform(*aug.noise, n).astype(np.float32)
    noise = rng.standard_normal((n, IMAGE_SIZE, IMAGE_SIZE), dtype=np.float32)

    # Forward map about the image centre: out = R(theta) · Shear · diag(mirror·scale, scale) · in + shift.
    cos, sin = np.cos(theta), np.sin(theta)
    rotation = np.stack([np.stack([cos, -sin], -1), np.stack([sin, cos], -1)], -2)
    shear_m = np.zeros((n, 2, 2))
    shear_m[:, 0, 0] = shear_m[:, 1, 1] = 1.0
    shear_m[:, 0, 1] = shear
    stretch = np.zeros((n, 2, 2))
    stretch[:, 0, 0] = mirror * scale
    stretch[:, 1, 1] = scale
    inverse = np.linalg.inv(rotation @ shear_m @ stretch)
    centre = RENDER_SIZE / 2.0
    # Pillow's AFFINE data maps each output pixel to the input: in = inverse · (out - centre - shift) + centre.
    offset = centre - np.einsum("nij,nj->ni", inverse, centre + shift)

    warped = np.empty((n, IMAGE_SIZE, IMAGE_SIZE), np.uint8)
    for i in range(n):
        (a, b), (d, e) = inverse[i]
        data = (a, b, offset[i, 0], d, e, offset[i, 1])
        image = Image.fromarray(sources[picks[i]]).transform(
            (RENDER_SIZE, RENDER_SIZE), Image.Transform.AFFINE, data, resample=Image.Resampling.BILINEAR)
        warped[i] = np.asarray(image.resize((IMAGE_SIZE, IMAGE_SIZE), Image.Resampling.BILINEAR))

    x = warped.astype(np.float32) / 255.0
    x = low[:, None, None] + (high - low)[:, None, None] * x + sigma[:, None, None] * noise
    return np.clip(np.rint(x * 255.0), 0, 255).astype(np.uint8)


def _balanced_labels(num_classes: int, per_class: int, rng: np.random.Generator) -> np.ndarray:
    return rng.permutation(np.repeat(np.arange(num_classes, dtype=np.int64), per_class))


# ----------------------------------------------------------------------------------------------------------------
# Fonts: which installed faces draw every character of a task, and the glyphs they draw.

def _font_faces() -> list[FontFace]:
    """Every face of FONT_PACKAGES (the first face of a .ttc: the others share its glyphs for these scripts)."""
    faces = []
    for package in FONT_PACKAGES:
        _, files = _debian_package(package)
        faces += [FontFace(path, 0, package) for path in files
                  if path.endswith((".ttf", ".otf", ".ttc")) and os.path.basename(path) not in EXCLUDED_FONTS]
    return sorted(faces, key=lambda face: face.path)


@lru_cache(maxsize=None)
def _cmap(face: FontFace) -> frozenset[int]:
    from fontTools.ttLib import TTFont

    try:
        with TTFont(face.path, fontNumber=face.index, lazy=True) as font:
            return frozenset(font.getBestCmap() or ())
    except Exception as error:  # a truncated or corrupt font file
        raise DataSourceError(f"font {face.path} (package {face.package}) cannot be read ({error}); "
                              f"apt-get install --reinstall {face.package}") from error


def _draw(font: ImageFont.FreeTypeFont, char: str) -> Image.Image | None:
    """The glyph's ink, cropped to its bounding box, or None when the face draws nothing."""
    # Two font sizes of margin on every side: Nastaliq descends and Myanmar ဪ spans two ems.
    canvas = Image.new("L", (6 * FONT_PIXELS, 6 * FONT_PIXELS))
    ImageDraw.Draw(canvas).text((2 * FONT_PIXELS, 2 * FONT_PIXELS), char, fill=255, font=font)
    box = canvas.getbbox()
    if box is None:
        return None
    if box[0] == 0 or box[1] == 0 or box[2] == canvas.width or box[3] == canvas.height:
        raise DataSourceError(f"glyph {char!r} (U+{ord(char):04X}) of {font.path} overflows the drawing canvas")
    return canvas.crop(box)


def _render_face(face: FontFace, chars: str) -> np.ndarray | None:
    """uint8 [len(chars), 64, 64]: each glyph centred on its bounding box, scaled as GLYPH_MEDIAN says.
    None if the face draws any of the characters blank."""
    # BASIC layout: one code point, one glyph, whether or not Pillow was built with raqm.
    font = ImageFont.truetype(face.path, FONT_PIXELS, index=face.index, layout_engine=ImageFont.Layout.BASIC)
    inks = [_draw(font, char) for char in chars]
    if any(ink is None for ink in inks):
        return None
    factor = GLYPH_MEDIAN / float(np.median([max(ink.size) for ink in inks]))
    out = np.zeros((len(chars), RENDER_SIZE, RENDER_SIZE), np.uint8)
    for k, ink in enumerate(inks):
        scale = min(factor, GLYPH_BOX / max(ink.size))
        width, height = (max(1, round(side * scale)) for side in ink.size)
        glyph = np.asarray(ink.resize((width, height), Image.Resampling.LANCZOS))
        top, left = (RENDER_SIZE - height) // 2, (RENDER_SIZE - width) // 2
        out[k, top:top + height, left:left + width] = glyph
    return out


def _glyph_bank(chars: str, what: str) -> tuple[list[FontFace], np.ndarray]:
    """Faces that cover every character of `chars` and their renders, uint8 [len(chars), faces, 64, 64]."""
    wanted = {ord(char) for char in chars}
    faces, renders, thumbnails = [], [], []
    for face in _font_faces():
        if wanted <= _cmap(face):
            render = _render_face(face, chars)
            if render is None:
                continue
            # Many Noto script faces carry Noto Sans' Latin letters and digits, and FreeSerif is Nimbus Roman: a
            # design counts once (the first face in path order), or the cloned one would dominate the task.
            thumbnail = render.reshape(len(chars), 16, 4, 16, 4).mean(axis=(2, 4))
            if any(np.abs(thumbnail - kept).mean() < SAME_DESIGN for kept in thumbnails):
                continue
            faces.append(face)
            renders.append(render)
            thumbnails.append(thumbnail)
    if not faces:
        raise DataSourceError(f"no installed face of {', '.join(FONT_PACKAGES)} draws every character of {what} "
                              f"({chars}); apt-get install {' '.join(FONT_PACKAGES)}")
    return faces, np.stack(renders, axis=1)


def _font_sources() -> tuple[dict[str, str], dict[str, str]]:
    debian = {package: _debian_package(package)[0] for package in FONT_PACKAGES}
    pypi = {"Pillow": importlib.metadata.version("Pillow"), "fonttools": importlib.metadata.version("fonttools")}
    return debian, pypi


def _build_glyphs(spec: TaskSpec) -> _Built:
    debian, pypi = _font_sources()
    faces, bank = _glyph_bank(spec.chars, f"task {spec.name!r}")
    weights = len(GLYPH_AUGMENT.stroke_weights)
    # Class c, face f, stroke weight w sit at (c * faces + f) * weights + w.
    sources = _weight_variants(bank.reshape(-1, RENDER_SIZE, RENDER_SIZE), GLYPH_AUGMENT.stroke_weights)
    arrays = {}
    for split in SPLITS:
        rng = _rng(spec.name, split)
        labels = _balanced_labels(spec.num_classes, PER_CLASS[split], rng)
        face = rng.integers(0, len(faces), len(labels))
        weight = rng.integers(0, weights, len(labels))
        arrays[f"{split}_x"] = _augment(sources, (labels * len(faces) + face) * weights + weight, GLYPH_AUGMENT, rng)
        arrays[f"{split}_y"] = labels
    files = [_source_file(face.path, face.package, face_index=face.index) for face in faces]
    recipe = {
        "kind": "glyphs",
        "description": (f"each class is one character drawn with Pillow ({FONT_PIXELS} px, basic layout) in every "
                        f"face of {', '.join(FONT_PACKAGES)} whose cmap covers all {spec.num_classes} characters "
                        f"(fontTools) and that draws them all, near-identical designs counted once; per face, "
                        f"glyphs are scaled by one factor so that the median one spans {GLYPH_MEDIAN} of "
                        f"{RENDER_SIZE} px (at most {GLYPH_BOX}), and centred on their bounding box. Each image "
                        f"draws a face, a stroke weight and an affine warp at {RENDER_SIZE} px, is downsampled to "
                        f"{IMAGE_SIZE} px (bilinear) and gets random contrast and Gaussian noise."),
        "chars": spec.chars,
        "codepoints": [f"U+{ord(char):04X}" for char in spec.chars],
        "faces": [face.label for face in faces],
        "excluded_fonts": sorted(EXCLUDED_FONTS),
        "augment": asdict(GLYPH_AUGMENT),
        "per_class": PER_CLASS,
        "seeds": {split: _seed(spec.name, split) for split in SPLITS},
    }
    return _Built(arrays, spec.class_names, debian, pypi, files, recipe)


# ----------------------------------------------------------------------------------------------------------------
# Real images: Fashion-MNIST, scikit-learn digits, scikit-image textures and faces.

FASHION_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                 "t10k-labels-idx1-ubyte.gz")


def _read_idx(path: str) -> np.ndarray:
    with gzip.open(path, "rb") as handle:
        raw = handle.read()
    if len(raw) < 4 or raw[:2] != b"\0\0" or raw[2] != 0x08:
        raise DataSourceError(f"{path} is not an IDX file of unsigned bytes; "
                              "apt-get install --reinstall dataset-fashion-mnist")
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * k:8 + 4 * k], "big") for k in range(ndim))
    body = np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(shape)):
        raise DataSourceError(f"{path} is truncated ({body.size} of {int(np.prod(shape))} bytes); "
                              "apt-get install --reinstall dataset-fashion-mnist")
    return body.reshape(shape)


def _build_fashion(spec: TaskSpec) -> _Built:
    package = "dataset-fashion-mnist"
    version, listing = _debian_package(package)
    paths = {}
    for name in FASHION_FILES:
        matches = [path for path in listing if os.path.basename(path) == name]
        if not matches:
            raise DataSourceError(f"{package} {version} ships no {name}; apt-get install --reinstall {package}")
        paths[name] = matches[0]
    files = [_source_file(paths[name], package) for name in FASHION_FILES]
    train_x, train_y = _read_idx(paths[FASHION_FILES[0]]), _read_idx(paths[FASHION_FILES[1]])
    test_x, test_y = _read_idx(paths[FASHION_FILES[2]]), _read_idx(paths[FASHION_FILES[3]])

    # Train and val are disjoint draws from the official training set, test from the official test set.
    chosen = {split: [] for split in SPLITS}
    rng = _rng(spec.name, "sources")
    for label in range(spec.num_classes):
        pool = rng.permutation(np.flatnonzero(train_y == label))
        chosen["train"].append(pool[:PER_CLASS["train"]])
        chosen["val"].append(pool[PER_CLASS["train"]:PER_CLASS["train"] + PER_CLASS["val"]])
        chosen["test"].append(rng.permutation(np.flatnonzero(test_y == label))[:PER_CLASS["test"]])
    arrays = {}
    for split in SPLITS:
        index = _rng(spec.name, split).permutation(np.concatenate(chosen[split]))
        images, labels = (test_x, test_y) if split == "test" else (train_x, train_y)
        arrays[f"{split}_x"] = np.ascontiguousarray(images[index])
        arrays[f"{split}_y"] = labels[index].astype(np.int64)
    recipe = {
        "kind": "subsample",
        "description": ("Fashion-MNIST as shipped (28x28, no augmentation); per class, train and val are disjoint "
                        "seeded draws from the official training set and test from the official test set"),
        "per_class": PER_CLASS,
        "seeds": {stream: _seed(spec.name, stream) for stream in (*SPLITS, "sources")},
    }
    return _Built(arrays, spec.class_names, {package: version}, {}, files, recipe)


def _split_sources(labels: np.ndarray, num_classes: int, rng: np.random.Generator) -> dict[str, list[np.ndarray]]:
    """Per split and class, the indices of the real images that split may use (disjoint across splits)."""
    out = {split: [] for split in SPLITS}
    for label in range(num_classes):
        pool = rng.permutation(np.flatnonzero(labels == label))
        cuts = np.rint(np.cumsum(SOURCE_FRACTIONS)[:-1] * len(pool)).astype(int)
        for split, part in zip(SPLITS, np.split(pool, cuts)):
            out[split].append(part)
    return out


def _augmented_real(spec: TaskSpec, sources: np.ndarray, labels: np.ndarray, aug: Augment) -> dict[str, np.ndarray]:
    """Augmented copies of real 64 px images, each split drawing only from its own share of the sources."""
    per_split = _split_sources(labels, spec.num_classes, _rng(spec.name, "sources"))
    variants = _weight_variants(sources, aug.stroke_weights)
    weights = len(aug.stroke_weights)
    arrays = {}
    for split in SPLITS:
        rng = _rng(spec.name, split)
        y = _balanced_labels(spec.num_classes, PER_CLASS[split], rng)
        source = np.empty(len(y), np.int64)
        for label, pool in enumerate(per_split[split]):
            mask = y == label
            source[mask] = pool[rng.integers(0, len(pool), int(mask.sum()))]
        weight = rng.integers(0, weights, len(y))
        arrays[f"{split}_x"] = _augment(variants, source * weights + weight, aug, rng)
        arrays[f"{split}_y"] = y
    return arrays


def _to_canvas(images: np.ndarray, side: int) -> np.ndarray:
    """uint8 [N, h, w] -> uint8 [N, 64, 64]: each image resized to side×side (bilinear) and centred."""
    out = np.zeros((len(images), RENDER_SIZE, RENDER_SIZE), np.uint8)
    start = (RENDER_SIZE - side) // 2
    for k, image in enumerate(images):
        out[k, start:start + side, start:start + side] = np.asarray(
            Image.fromarray(image).resize((side, side), Image.Resampling.BILINEAR))
    return out


DIGITS_SIDE = 40  # the 8×8 digits are upsampled to 40 px on the 64 px canvas, the size of a glyph


def _build_digits(spec: TaskSpec) -> _Built:
    version, root = _pypi_package("scikit-learn", "sklearn")
    path = root / "datasets" / "data" / "digits.csv.gz"
    files = [_source_file(path, "scikit-learn", root=root)]
    table = np.loadtxt(path, delimiter=",", dtype=np.float64)  # what sklearn.datasets.load_digits reads
    images = np.rint(table[:, :64].reshape(-1, 8, 8) * (255.0 / 16.0)).astype(np.uint8)
    labels = table[:, 64].astype(np.int64)
    arrays = _augmented_real(spec, _to_canvas(images, DIGITS_SIDE), labels, GLYPH_AUGMENT)
    recipe = {
        "kind": "augmented-real",
        "description": (f"scikit-learn's 1,797 handwritten 8x8 digits (load_digits' file), split by source image "
                        f"{SOURCE_FRACTIONS} into train/val/test, upsampled to {DIGITS_SIDE} px on a {RENDER_SIZE} px "
                        f"canvas, then the glyph tasks' augmentation"),
        "source_fractions": SOURCE_FRACTIONS,
        "augment": asdict(GLYPH_AUGMENT),
        "per_class": PER_CLASS,
        "seeds": {stream: _seed(spec.name, stream) for stream in (*SPLITS, "sources")},
    }
    return _Built(arrays, spec.class_names, {}, {"scikit-learn": version}, files, recipe)


def _build_faces(spec: TaskSpec) -> _Built:
    version, root = _pypi_package("scikit-image", "skimage")
    path = root / "data" / "lfw_subset.npy"
    files = [_source_file(path, "scikit-image", root=root)]
    photos = np.load(path)  # what skimage.data.lfw_subset returns: 100 faces, then 100 non-faces, float in [0, 1]
    images = np.rint(np.clip(photos, 0.0, 1.0) * 255.0).astype(np.uint8)
    labels = np.repeat(np.arange(2, dtype=np.int64), len(images) // 2)
    arrays = _augmented_real(spec, _to_canvas(images, RENDER_SIZE), labels, FACES_AUGMENT)
    recipe = {
        "kind": "augmented-real",
        "description": (f"scikit-image's lfw_subset (100 faces, 100 non-face patches, 25x25), split by source image "
                        f"{SOURCE_FRACTIONS} into train/val/test, resized to fill the {RENDER_SIZE} px canvas, then a "
                        "mild warp (zoom in only), mirror, contrast and noise"),
        "source_fractions": SOURCE_FRACTIONS,
        "augment": asdict(FACES_AUGMENT),
        "per_class": PER_CLASS,
        "seeds": {stream: _seed(spec.name, stream) for stream in (*SPLITS, "sources")},
    }
    return _Built(arrays, spec.class_names, {}, {"scikit-image": version}, files, recipe)


# class name -> file in skimage/data (what skimage.data.<name>() loads; all ship in the wheel, none downloads)
TEXTURE_FILES = {"brick": "brick.png", "grass": "grass.png", "gravel": "gravel.png", "camera": "camera.png",
                 "coins": "coins.png", "moon": "moon.png", "page": "page.png", "text": "text.png",
                 "hubble_deep_field": "hubble_deep_field.jpg", "immunohistochemistry": "ihc.png"}


def _build_textures(spec: TaskSpec) -> _Built:
    version, root = _pypi_package("scikit-image", "skimage")
    paths = [root / "data" / TEXTURE_FILES[name] for name in spec.class_names]
    files = [_source_file(path, "scikit-image", root=root) for path in paths]
    photos = []
    for path in paths:
        with Image.open(path) as image:
            photos.append(image.convert("L"))  # ITU-R 601 luma for the two colour images
    texture = TEXTURE_RECIPE
    arrays = {}
    for index, split in enumerate(SPLITS):
        rng = _rng(spec.name, split)
        y = _balanced_labels(spec.num_classes, PER_CLASS[split], rng)
        side = rng.integers(texture.crop[0], texture.crop[1] + 1, len(y))
        u, v = rng.random(len(y)), rng.random(len(y))
        mirror = rng.random(len(y)) < 0.5 if texture.hflip else np.zeros(len(y), bool)
        gain = rng.uniform(*texture.gain, len(y)).astype(np.float32)
        shift = rng.uniform(*texture.offset, len(y)).astype(np.float32)
        sigma = rng.uniform(*texture.noise, len(y)).astype(np.float32)
        noise = rng.standard_normal((len(y), IMAGE_SIZE, IMAGE_SIZE), dtype=np.float32)
        crops = np.empty((len(y), IMAGE_SIZE, IMAGE_SIZE), np.uint8)
        for i, label in enumerate(y):
            photo = photos[label]
            left = int(texture.bands[index] * photo.width)
            right = int(texture.bands[index + 1] * photo.width)
            s = int(min(side[i], right - left, photo.height))
            x0 = left + int(u[i] * (right - left - s + 1))
            y0 = int(v[i] * (photo.height - s + 1))
            crop = photo.resize((IMAGE_SIZE, IMAGE_SIZE), Image.Resampling.BILINEAR, box=(x0, y0, x0 + s, y0 + s))
            crops[i] = np.asarray(crop)[:, ::-1] if mirror[i] else np.asarray(crop)
        x = crops.astype(np.float32) / 255.0
        mean = x.mean(axis=(1, 2), keepdims=True)
        x = mean + gain[:, None, None] * (x - mean) + shift[:, None, None] + sigma[:, None, None] * noise
        arrays[f"{split}_x"] = np.clip(np.rint(x * 255.0), 0, 255).astype(np.uint8)
        arrays[f"{split}_y"] = y
    recipe = {
        "kind": "texture-crops",
        "description": ("one class per scikit-image photograph; square crops (random side and place) from a column "
                        "band of the photograph reserved for the split, resized to 28 px (bilinear), mirrored at "
                        "random, random contrast about the crop mean, offset and Gaussian noise"),
        "files": {name: TEXTURE_FILES[name] for name in spec.class_names},
        "recipe": asdict(TEXTURE_RECIPE),
        "per_class": PER_CLASS,
        "seeds": {split: _seed(spec.name, split) for split in SPLITS},
    }
    return _Built(arrays, spec.class_names, {}, {"scikit-image": version}, files, recipe)


# ----------------------------------------------------------------------------------------------------------------
# Tasks and suites

FASHION_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
                   "Ankle boot")

# One writing system per task, 10 characters each. Where a script has look-alikes, the set keeps some (Arabic
# letters told apart by their dots, Cyrillic Ш/Ц, Hangul syllables sharing their first consonant) so that the base
# is not already good at it: Greek capitals and basic Hangul proved too easy (docs/zoo.md).
GLYPH_TASKS = {
    "latin": ("Latin capitals A-J", "ABCDEFGHIJ"),
    "fontdigits": ("digits 0-9 in typefaces", "0123456789"),
    "greek": ("Greek lowercase letters", "αβγδεζηθλξ"),
    "cyrillic": ("Cyrillic capitals without a Latin look-alike", "БГДЖЗИЛПЦШ"),
    "hiragana": ("hiragana あ-こ", "あいうえおかきくけこ"),
    "katakana": ("katakana ア-コ", "アイウエオカキクケコ"),
    "hangul": ("Hangul syllables on ㄱ with ten vowels", "가거고구그기개게과귀"),
    "devanagari": ("Devanagari consonants", "कखगघचछजझटठ"),
    "arabic": ("Arabic letters, isolated forms", "بتثجحخدذرز"),
    "hebrew": ("Hebrew letters alef-yod", "אבגדהוזחטי"),
    "thai": ("Thai consonants", "กขคงจฉชซญด"),
    "armenian": ("Armenian capitals", "ԱԲԳԴԵԶԷԸԹԺ"),
    "georgian": ("Georgian Mkhedruli letters", "აბგდევზთიკ"),
    "ethiopic": ("Ethiopic syllables (first order)", "ሀለሐመሠረሰቀበተ"),
    "bengali": ("Bengali consonants", "কখগঘঙচছজঝঞ"),
    "tamil": ("Tamil consonants", "கஙசஞடணதநபம"),
}


def _glyph_spec(name: str) -> TaskSpec:
    what, chars = GLYPH_TASKS[name]
    return TaskSpec(name, tuple(chars), f"{what}, rendered from Debian fonts ({', '.join(FONT_PACKAGES)})",
                    _build_glyphs, chars)


TASKS: dict[str, TaskSpec] = {
    "fashion": TaskSpec("fashion", FASHION_CLASSES, "Fashion-MNIST (Debian dataset-fashion-mnist), subsampled",
                        _build_fashion),
    "digits": TaskSpec("digits", tuple("0123456789"), "scikit-learn handwritten 8x8 digits, upsampled and augmented",
                       _build_digits),
    "textures": TaskSpec("textures", tuple(TEXTURE_FILES), "crops of 10 scikit-image photographs and textures",
                         _build_textures),
    "faces": TaskSpec("faces", ("face", "non-face"), "scikit-image lfw_subset, faces vs non-faces, augmented",
                      _build_faces),
    **{name: _glyph_spec(name) for name in GLYPH_TASKS},
}

# Nested, so the three zoos share one base and one expert per task. tiny8 mixes the four non-glyph tasks (nearly
# orthogonal to everything) with four glyph tasks (which help one another); the easy Greek and Hangul come last.
_TINY8 = ("fashion", "digits", "textures", "faces", "latin", "cyrillic", "hiragana", "devanagari")
_TINY14 = _TINY8 + ("arabic", "hebrew", "thai", "katakana", "fontdigits", "georgian")
_TINY20 = _TINY14 + ("armenian", "ethiopic", "bengali", "tamil", "greek", "hangul")
SUITES: dict[str, tuple[str, ...]] = {
    "micro": ("digits", "hebrew", "devanagari"),  # the tests' suite: small font sets, a few seconds to build
    "tiny8": _TINY8,
    "tiny14": _TINY14,
    "tiny20": _TINY20,
}


# ----------------------------------------------------------------------------------------------------------------
# Pretraining pool: 400 classes disjoint (by character) from every task.

POOL_NAME = "pretrain_pool"
POOL_IMAGES_PER_CLASS = 60
# 80 common ideographs, leaving out those that are kana look-alikes (口 ロ, 工 エ, 力 カ, 二 ニ, 八 ハ, 夕 タ, 卜 ト).
_POOL_CJK = ("日月火水木金土山川田人大小中上下左右目耳手足心天地花草竹石本年生先学校字文車雨電空海風雪雲森林村町国語"
             "話読書見聞食飲休立名犬猫鳥魚牛馬羊虫貝糸米麦茶肉酒門王玉白")
# Symbols with no look-alike among the tasks' characters (no ∈ ∂ ∏ ∑ ⊂ ⊃ ∀ ∃, which mimic ε δ П Σ C E A).
_POOL_ARROWS = "".join(chr(cp) for cp in range(0x2190, 0x21AA))
_POOL_MATH = "∅∇∗∘√∞∟∠∥∫∮∴∵∷≈≠≡≤≥≪≫⊕⊗⊙⊢⊥⋈≅"
_POOL_GEOMETRIC = "■□▣▤▥▦▧▨▩▲△▶▷▼▽◀◁◆◇◈◉○◎●◐◑"
# 12 letters from each of 20 scripts no task uses, evenly spaced over the letters the most faces cover, then
# hand-swapped where a letter mimics a task's character or another pool class: a pool that already holds a task's
# shapes makes the base too good on it (Cherokee Ꭰ Ᏼ Ꮎ Ᏸ ~ D B θ β, Tifinagh ⵣ ⵍ ⴹ ~ Ж И E, Deseret 𐐋 𐐕 𐐜 ~ 9 C γ,
# N'Ko ߊ ߏ ߗ ~ I コ 1, Coptic Ⲁ Ⲉ Ϭ ~ A E 6, Lao ກ ຄ ຊ ດ ~ Thai ก ค ซ ด, Canadian ᐁ ~ ∇, Runic ᚻ ᛏ ~ H ↑).
_POOL_SCRIPTS = {
    "cherokee": "ᎣᎤᎭᎲᎹᏅᏉᏍᏑᏡᏪᏯ",
    "canadian_syllabics": "ᑍᑱᒕᒹᓟᔄᔰᕕᖂᙇᓯᔑ",
    "tifinagh": "ⴵⴶⴻⴽⵄⵇⵋⵔⵕⵖⵚⵢ",
    "runic": "ᚠᚧᚭᚴᚦᛂᛈᛟᛖᛝᛣᛪ",
    "coptic": "ϢϤϦⲦϪⲜϮⲘⲪⲮⲰⲊ",
    "glagolitic": "ⰀⰄⰈⰋⰏⰓⰗⰛⰟⰣⰧⰮ",
    "vai": "ꔀꔘꔱꕉꕡꕹꖒꖪꗂꗚꗳꘋ",
    "yi": "ꀀꁫꃔꄾꆨꈒꉻꋥꍏꎹꐢꒌ",
    "linear_b": "𐀀𐀈𐀑𐀙𐀡𐀪𐀱𐀹𐁃𐁋𐁕𐁝",
    "osage": "𐒴𐒵𐒹𐒻𐒼𐓀𐓁𐓄𐓇𐓊𐓍𐓑",
    "deseret": "𐐆𐐉𐐎𐐏𐐐𐐒𐐖𐐗𐐘𐐝𐐤𐐦",
    "nko": "ߐߑߒߔߕߤߘߚߝߞߢߦ",
    "khmer": "កឃឆញឌតនពយវសអ",
    "lao": "ຖທນບປຜຝພຟມຫຮ",
    "myanmar": "ကငဈဋဏဓဗရဟဢဦဪ",
    "sinhala": "කඞඡඥඩඬධපමලෂෆ",
    "gujarati": "ણથદનફભમડળશષહ",
    "kannada": "ಕಘಛಞಡತನಬಯಲಶಹ",
    "syriac": "ܐܔܖܙܜܟܡܤܧܪܬܯ",
    "mongolian": "ᠠᠣᠦᠩᠬᠯᠳᠶᠹᠼᠿᡂ",
}
# Each group is rendered in the faces that cover all of it, so a face never tells two classes of a group apart.
POOL_GROUPS: dict[str, str] = {"cjk": _POOL_CJK, "arrows": _POOL_ARROWS, "math": _POOL_MATH,
                               "geometric": _POOL_GEOMETRIC, **_POOL_SCRIPTS}


def pool_class_names() -> tuple[str, ...]:
    return tuple(char for chars in POOL_GROUPS.values() for char in chars)


def build_pretrain_pool(*, images_per_class: int = POOL_IMAGES_PER_CLASS, verify: bool = True
                        ) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """The base's pretraining data: uint8 [N, 28, 28], int64 [N] and the class names (one character each).

    With verify, the fonts are checked against data_manifests/pretrain_pool.json, and the arrays too when
    images_per_class is the recorded default."""
    built = _build_pool(images_per_class)
    if verify:
        _verify(POOL_NAME, _manifest(POOL_NAME, built), _load_manifest(POOL_NAME),
                check_arrays=images_per_class == POOL_IMAGES_PER_CLASS)
    return built.arrays["x"], built.arrays["y"], built.class_names


def _build_pool(images_per_class: int) -> _Built:
    if images_per_class < 1:
        raise DataSourceError(f"images_per_class must be at least 1, got {images_per_class}")
    debian, pypi = _font_sources()
    class_names = pool_class_names()
    rng = _rng(POOL_NAME, "train")
    labels = _balanced_labels(len(class_names), images_per_class, rng)
    # One source bank for all groups: class c, face f, weight w sit at first[c] + f * weights + w.
    weights = len(GLYPH_AUGMENT.stroke_weights)
    banks, first, face_count, used, groups = [], [], [], {}, {}
    offset = 0
    for group, chars in POOL_GROUPS.items():
        faces, bank = _glyph_bank(chars, f"pretraining group {group!r}")
        groups[group] = {"chars": chars, "faces": [face.label for face in faces]}
        for face in faces:
            used.setdefault((face.path, face.index), face)
        for char_bank in bank:  # [faces, 64, 64] for one class
            first.append(offset)
            face_count.append(len(faces))
            offset += len(faces) * weights
            banks.append(_weight_variants(char_bank, GLYPH_AUGMENT.stroke_weights))
    sources = np.concatenate(banks)
    face_pick = np.floor(rng.random(len(labels)) * np.asarray(face_count)[labels]).astype(np.int64)
    weight = rng.integers(0, weights, len(labels))
    picks = np.asarray(first)[labels] + face_pick * weights + weight
    x = _augment(sources, picks, GLYPH_AUGMENT, rng)
    files = [_source_file(face.path, face.package, face_index=face.index) for face in
             sorted(used.values(), key=lambda face: (face.path, face.index))]
    recipe = {
        "kind": "glyphs",
        "description": ("pretraining pool, disjoint by character from every task: 80 CJK ideographs, 80 symbols "
                        "(arrows, math, geometric) and 12 letters from each of 20 scripts no task uses, each group "
                        "drawn in every face that covers all of it, with the glyph tasks' augmentation"),
        "groups": groups,
        "augment": asdict(GLYPH_AUGMENT),
        "images_per_class": images_per_class,
        "seeds": {"pool": _seed(POOL_NAME, "train")},
    }
    return _Built({"x": x, "y": labels}, class_names, debian, pypi, files, recipe)


# ----------------------------------------------------------------------------------------------------------------
# Manifests and verification

def manifest_dir() -> Path:
    """data_manifests/ at the repository root, or $NBMERGE_DATA_MANIFESTS."""
    override = os.environ.get("NBMERGE_DATA_MANIFESTS")
    return Path(override) if override else Path(__file__).resolve().parents[2] / "data_manifests"


def _manifest_path(name: str) -> Path:
    return manifest_dir() / (f"{POOL_NAME}.json" if name == POOL_NAME else f"tasks/{name}.json")


def _manifest(name: str, built: _Built) -> dict:
    first = next(iter(built.arrays.values()))
    splits = ({split: int(len(built.arrays[f"{split}_y"])) for split in SPLITS} if "train_y" in built.arrays
              else {"pool": int(len(first))})
    return {
        "format": MANIFEST_FORMAT,
        "name": name,
        "source": TASKS[name].source if name in TASKS else "pretraining pool of rendered glyphs",
        "class_names": list(built.class_names),
        "num_classes": len(built.class_names),
        "splits": splits,
        "packages": {"debian": built.debian, "pypi": built.pypi},
        "toolchain": _toolchain(),
        "files": built.files,
        "recipe": built.recipe,
        "arrays": {key: {"shape": list(value.shape), "dtype": str(value.dtype), "sha256": _sha256_array(value)}
                   for key, value in built.arrays.items()},
    }


def _load_manifest(name: str) -> dict:
    path = _manifest_path(name)
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise DataSourceError(f"no manifest for {name!r} at {path}; regenerate data_manifests/ with "
                              "`python -c 'from nbmerge.tasks.vision import write_manifests; write_manifests()'` "
                              "or pass verify=False") from None
    except json.JSONDecodeError as error:
        raise DataSourceError(f"manifest {path} is not valid JSON ({error})") from None


def _verify(name: str, current: dict, recorded: dict, *, check_arrays: bool = True) -> None:
    """Raise DataSourceError at the first difference between a fresh build and its recorded manifest."""
    where = _manifest_path(name)
    if recorded.get("format") != MANIFEST_FORMAT:
        raise DataSourceError(f"{where} has manifest format {recorded.get('format')!r}, this nbmerge writes "
                              f"{MANIFEST_FORMAT}; regenerate data_manifests/")
    versions = {**recorded["packages"].get("debian", {}), **recorded["packages"].get("pypi", {})}
    installed = {**current["packages"]["debian"], **current["packages"]["pypi"]}
    old_files = {(f["path"], f.get("face_index", 0)): f for f in recorded["files"]}
    new_files = {(f["path"], f.get("face_index", 0)): f for f in current["files"]}
    for key, old in old_files.items():
        package = old["package"]
        was, now = versions.get(package, "?"), installed.get(package, "?")
        if key not in new_files:
            raise DataSourceError(
                f"{name}: source file {key[0]} (package {package} {was}) recorded in {where} is not used by this "
                f"build (missing, or no longer covers the task; {package} installed: {now}); "
                f"apt-get install --reinstall {package}, or regenerate data_manifests/")
        if new_files[key]["sha256"] != old["sha256"]:
            raise DataSourceError(
                f"{name}: checksum mismatch for source file {key[0]} (package {package}): sha256 "
                f"{new_files[key]['sha256']} on this machine, {old['sha256']} recorded in {where} "
                f"({package} recorded {was}, installed {now}); {_install_hint(package)}")
    extra = sorted(set(new_files) - set(old_files))
    if extra:
        raise DataSourceError(f"{name}: this build uses source files not recorded in {where}: "
                              f"{', '.join(path for path, _ in extra)}; regenerate data_manifests/")
    for field in ("class_names", "splits"):
        if check_arrays and current[field] != recorded[field]:
            raise DataSourceError(f"{name}: {field} {current[field]} differ from {recorded[field]} in {where}")
    if not check_arrays:
        return
    for key, old in recorded["arrays"].items():
        new = current["arrays"].get(key)
        if new is None or (new["shape"], new["dtype"], new["sha256"]) != (old["shape"], old["dtype"], old["sha256"]):
            got = "missing" if new is None else f"shape {new['shape']} {new['dtype']} sha256 {new['sha256']}"
            raise DataSourceError(
                f"{name}: generated array {key} does not match {where}: {got} here, shape {old['shape']} "
                f"{old['dtype']} sha256 {old['sha256']} recorded (toolchain recorded {recorded.get('toolchain')}, "
                f"here {current['toolchain']}); the sources match, so the generator or a library changed")


def build_task(name: str, *, verify: bool = True) -> TaskData:
    """Build one task, deterministically; with verify, check it against data_manifests/tasks/<name>.json."""
    spec = TASKS.get(name)
    if spec is None:
        raise DataSourceError(f"unknown task {name!r}; tasks: {', '.join(TASKS)}")
    recorded = _load_manifest(name) if verify else None
    built = spec.builder(spec)
    if verify:
        _verify(name, _manifest(name, built), recorded)
    return TaskData(name, built.class_names, **{key: built.arrays[key] for key in
                                                ("train_x", "train_y", "val_x", "val_y", "test_x", "test_y")})


def manifest_for(name: str) -> dict:
    """The manifest recorded in data_manifests/ for a task (or for "pretrain_pool")."""
    if name not in TASKS and name != POOL_NAME:
        raise DataSourceError(f"unknown task {name!r}; tasks: {', '.join(TASKS)}")
    return _load_manifest(name)


def suite_manifest(suite: str) -> dict:
    if suite not in SUITES:
        raise DataSourceError(f"unknown suite {suite!r}; suites: {', '.join(SUITES)}")
    return {"format": MANIFEST_FORMAT, "suite": suite, "tasks": list(SUITES[suite]),
            "num_classes": {task: TASKS[task].num_classes for task in SUITES[suite]},
            "nested_in": [other for other in SUITES if other != suite
                          and set(SUITES[suite]) <= set(SUITES[other])]}


def _write_json(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.",
                                         suffix=".tmp", delete=False)
    try:
        with handle:
            json.dump(payload, handle, indent=1, ensure_ascii=False)
            handle.write("\n")
        os.chmod(handle.name, 0o644)  # NamedTemporaryFile creates 0600
        os.replace(handle.name, path)
    except BaseException:
        os.unlink(handle.name)
        raise


def write_manifests() -> None:
    """Rebuild every task and the pool and rewrite data_manifests/ (a maintainer command).

    Everything is built before anything is written, and each file is replaced atomically, so a failure leaves the
    previous manifests in place."""
    payloads: dict[Path, dict] = {}
    root = manifest_dir()
    for name, spec in TASKS.items():
        payloads[root / "tasks" / f"{name}.json"] = _manifest(name, spec.builder(spec))
    payloads[root / f"{POOL_NAME}.json"] = _manifest(POOL_NAME, _build_pool(POOL_IMAGES_PER_CLASS))
    for suite in SUITES:
        payloads[root / "suites" / f"{suite}.json"] = suite_manifest(suite)
    for path, payload in payloads.items():
        _write_json(path, payload)
    for folder in ("tasks", "suites"):
        for stale in (root / folder).glob("*.json"):
            if stale not in payloads:
                stale.unlink()


def _main() -> None:
    """`python -m nbmerge.tasks.vision`: regenerate data_manifests/."""
    write_manifests()
    print(f"wrote {manifest_dir()}")


if __name__ == "__main__":
    _main()
