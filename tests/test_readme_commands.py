"""Every command README.md prints runs as printed (issue 18), in a scratch folder, against small fixtures.

How the README is read: every fenced ```bash block is split into commands (``\\`` continuations joined, a trailing
``# comment`` stripped, whole-line comments skipped); every ```python block is one script; every ```yaml block is a
file the commands use (``YAML_FILES`` names it); a ``# nbmerge ...`` comment inside a python block is a command the
README tells the reader to run next; an inline code span that starts with a command word (``make``, ``nbmerge``,
``python``, ``pip``, ``papermill``, ``.venv/bin/...``) is a command unless ``MENTIONS`` lists it as a name in prose.
``PLAN`` says, for every command, how it is checked and why. A README command that ``PLAN`` does not know fails
``test_every_readme_command_has_a_plan`` (so a new command gets covered), and so does a ``PLAN`` entry the README no
longer prints.

How the commands are checked (the ``mode`` of each ``PLAN`` entry):

* ``run``: run as printed, in the scratch folder, split as the shell splits it, with the substitutions of
  ``SUBSTITUTIONS`` (the README's placeholder paths, and ``cuda`` where there is no GPU) and nothing else;
* ``swap``: run with the named parts of the command swapped for cheaper ones (a built text8 zoo takes 12 minutes; the
  fake pool stands in for it), each swap asserted to apply;
* ``dry-run``: ``nbmerge report`` commands that take minutes to an hour get ``--dry-run`` appended: every parameter
  (names, types, values, suites) is checked as a real run checks it before its first notebook, and nothing runs;
* ``prepare``: the papermill command gets ``--prepare-only``: papermill parses it and writes ``out.ipynb`` with the
  parameters injected (checked), without starting a kernel;
* ``parse``: long ``nbmerge`` commands are parsed by the CLI's own argument parser;
* ``help``: ``python -m`` benchmarks (minutes, or a GPU) run with ``--help``, which must list every option used;
* ``make``: ``make -n`` in the repository: the target exists and its recipe expands (nothing is executed);
* ``not-run``: named with the reason (e.g. a network install).

The fixtures: a fake CLIP pool under the README's name ``clip-vit-b32-8`` (tiny random open_clip towers with head
files, ``nbmerge.pools.fake``) and fake data for its 8 tasks, imported by the README's own ``nbmerge pool import``
command (run first); ``base.safetensors``, ``e1.safetensors``/``e2.safetensors`` (the MNIST and SVHN experts) and
``models/{base,mnist,svhn}.safetensors`` (the recipe's) are the pool's checkpoints, and ``g1``/``g2.safetensors``
those experts' tasks' Grams written by the README's ``nbmerge stats`` command (run second), so every merge, ``eval``
and ``stats`` command works on the same models. ``.venv/bin/`` in the scratch folder holds shims that run this
interpreter (``nbmerge``, ``papermill``, ``python``; the README's "activate the venv"), with the checkout first on
``PYTHONPATH``, and the ``nbmerge`` kernel the notebooks name is registered there on ``JUPYTER_PATH`` (what ``make
setup`` does). ``nbmerge`` commands run in this process through the console script's entry point
(``nbmerge.cli:main``, with the scratch folder as working directory and its environment): a subprocess each would
spend most of this file's time importing torch again. Python blocks, papermill and the one report run (through the
``nbmerge`` shim on ``PATH``) are subprocesses. Caches go to ``NBMERGE_CACHE`` in the scratch folder and reports
to ``--out`` there: the repository is checked unchanged at the end.

One notebook runs (the only papermill execution here): the CLIP ``nbmerge report`` command with ``--smoke --only
00_tour`` on the fake pool, whose executed notebook is also checked for figures drawn twice.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import runpy
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
POOL = "clip-vit-b32-8"
POOL_TASKS = ["SUN397", "Cars", "RESISC45", "EuroSAT", "SVHN", "GTSRB", "MNIST", "DTD"]  # data_manifests/clip
TIMEOUT = 300


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


CUDA = _has_cuda()

# ------------------------------------------------------------------------------------------- reading the README

COMMAND_WORD = re.compile(r"^(make|nbmerge|python3?|pip|papermill|\.venv/bin/\S+)(\s|$)")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class Found:
    """A command of the README: its text as printed, where it was found, and (python) the script it is."""
    text: str
    where: str       # "bash", "inline", "python", "python-comment"


def strip_comment(line: str) -> str:
    """``line`` without a trailing ``# comment`` (a ``#`` outside quotes that starts a word)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def shell_commands(block: str) -> list[str]:
    """The commands of a bash block: continuations joined, comments stripped, blank lines skipped."""
    commands, pending = [], ""
    for raw in block.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        joined = strip_comment((pending + line.strip()) if pending else line.strip())
        pending = ""
        if joined:
            commands.append(re.sub(r"\s+", " ", joined))
    assert not pending, f"a continuation at the end of a block: {block!r}"
    return commands


def readme_parts(text: str) -> tuple[list[Found], list[str]]:
    """(every command of the README in order, the yaml blocks)."""
    found, yamls = [], []
    for match in FENCE.finditer(text):
        lang, body = match.group(1), match.group(2)
        if lang == "bash":
            found += [Found(c, "bash") for c in shell_commands(body)]
        elif lang == "python":
            found.append(Found(body, "python"))
            found += [Found(re.sub(r"\s+", " ", line.strip()[1:].strip()), "python-comment")
                      for line in body.splitlines()
                      if line.strip().startswith("#") and COMMAND_WORD.match(line.strip()[1:].strip())]
        elif lang == "yaml":
            yamls.append(body)
        elif lang == "text":
            continue  # not commands (the layout tree)
        else:
            raise AssertionError(f"a ```{lang} block in README.md: say in this test whether it is runnable")
    prose = FENCE.sub("", text)
    for span in re.findall(r"`([^`\n]+)`", prose):
        if COMMAND_WORD.match(span):
            found.append(Found(span, "inline"))
    return found, yamls


README_COMMANDS, README_YAML = readme_parts(README.read_text())

# ----------------------------------------------------------------------------------------------------- the plan

#: Inline spans that name a command or a file in prose rather than print one to run.
MENTIONS = {"make", "nbmerge", "nbmerge lm-eval", "python3", ".venv/bin/nbmerge", ".venv/bin/papermill", "nbmerge (.venv)",
            "nbmerge eval", "nbmerge stats", "nbmerge zoo build", "nbmerge zoo build|path|info", "nbmerge merge",
            "nbmerge pool import", "nbmerge zoo build SUITE", "nbmerge report --dry-run"}

#: The README's yaml blocks, by their first line: the file each is (the command that reads it is in PLAN).
YAML_FILES = {"method: ties": "recipe.yaml"}

#: Placeholders of the README, replaced in every command that holds them (and in nothing else). ``{scratch}`` and
#: ``{fake}`` are the scratch folder and the fake pool's folder.
SUBSTITUTIONS = [
    ("/data/ckpt/ViT-B-32", "{fake}/ckpt/ViT-B-32", "the README's checkpoint folder: the fake pool's"),
    ("/data/datasets", "{fake}/datasets", "the README's dataset root: the fake data's"),
    ("/tmp/fake", "{scratch}/tmp-fake", "the README's fake-pool example writes under /tmp: kept in the scratch folder"),
] + ([] if CUDA else [
    ("--device cuda", "--device cpu", "no GPU here"),
    ("-p device cuda", "-p device cpu", "no GPU here"),
    ('device="cuda"', 'device="cpu"', "no GPU here"),
])


@dataclass(frozen=True)
class Plan:
    mode: str                                   # run | swap | dry-run | prepare | parse | help | make | not-run
    why: str = ""                               # why it is not simply run (everything but `run`)
    swaps: tuple[tuple[str, str], ...] = ()     # (printed, used) parts of the command, for `swap`
    check: Optional[Callable] = None            # more checks of a finished run: check(result, scratch)
    also: tuple[str, ...] = ()                  # further arguments to run it with (say why in `why`)


def _json_out(result, _scratch):
    return json.loads(result.stdout)


def _file(*names):
    def check(_result, scratch):
        for name in names:
            assert (scratch / name).is_file(), f"{name} was not written"
    return check


def _check_methods(result, _scratch):
    for name in ("ties", "regmean", "bmm", "tsv", "iso_cts", "ace"):
        assert re.search(rf"^{name}\s", result.stdout, re.M), name


def _check_merge(result, scratch):
    from safetensors import safe_open

    assert "merged 2 experts" in result.stdout
    with safe_open(scratch / "merged.safetensors", "pt") as merged, \
            safe_open(scratch / "base.safetensors", "pt") as base:
        assert set(merged.keys()) == set(base.keys())


def _check_recipe(result, scratch):
    from safetensors import safe_open

    assert "merged 2 experts with ties" in result.stdout
    with safe_open(scratch / "merged.safetensors", "pt") as merged:
        assert {str(merged.get_slice(k).get_dtype()) for k in merged.keys()} == {"BF16"}  # the recipe's dtype


def _check_bmm(result, scratch):
    assert re.search(r"\(\d+ trials, \d+ from the log\)", result.stdout), result.stdout
    assert (scratch / "tuned.safetensors").is_file() and (scratch / "trials.jsonl").is_file()


def _check_zoo_path(result, scratch):
    assert Path(result.stdout.strip()).is_relative_to(scratch / "cache")  # NBMERGE_CACHE, not ~/.cache


def _check_info(result, _scratch):
    data = json.loads(result.stdout)
    assert data["suite"] == POOL and [t["name"] for t in data["tasks"]] == POOL_TASKS


def _check_eval(result, _scratch):
    data = json.loads(result.stdout)
    assert set(data["tasks"]) == set(POOL_TASKS) and "mean" in data


def _check_stats(_result, scratch):
    assert sorted(p.stem for p in (scratch / "grams").glob("*.safetensors")) == sorted(POOL_TASKS)


def _check_pool_import(result, _scratch):
    assert f"pool {POOL} ready" in result.stdout


def _check_pool_info(result, _scratch):
    assert result.stdout.startswith(f"suite {POOL}:") and all(t in result.stdout for t in POOL_TASKS)


def _check_clip_report(result, scratch):
    assert "dry run" in result.stdout and "pareto: " in result.stdout
    assert "'tasks': ['MNIST', 'SVHN', 'EuroSAT']" in result.stdout


def _check_papermill(_result, scratch):
    import nbformat

    nb = nbformat.read(str(scratch / "out.ipynb"), as_version=4)
    # "A plain .venv/bin/papermill run finds the same kernel": the one the notebook names is the one the set-up
    # registers
    registered = re.search(r"ipykernel install .*--name (\S+)", (REPO / "Makefile").read_text())
    assert registered and nb.metadata.kernelspec.name == registered.group(1)
    injected = [c.source for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1, "papermill injected no parameters cell"
    values: dict = {}
    exec(injected[0], {}, values)
    assert values["suite"] == POOL and values["suites"] == [POOL]  # -y gives a list, -p a string
    assert values["checkpoints"].endswith("/ckpt/ViT-B-32") and values["data_root"].endswith("/datasets")
    assert values["device"] == ("cuda" if CUDA else "cpu")


def _check_fake_import(result, _scratch):
    assert "pool clip-tiny-3 ready" in result.stdout


_REPORT_SLOW = "runs every notebook: minutes (smoke) to an hour (default) or many hours (paper)"
_TEXT8 = ("needs the built text8 zoo (12 min to build): the same command on the fake pool, which is built in "
          "seconds")

#: Every command of the README → how this test checks it. Keys are the commands exactly as extracted.
PLAN: dict[str, Plan] = {
    # -- the first block and the prose around it
    "make report": Plan("make", "the whole report: 52 min on 2 cores"),
    "make test": Plan("make", "the whole test suite, this file included"),
    "nbmerge report --check --publish": Plan("dry-run", "what `make report` runs: " + _REPORT_SLOW),
    "make report PROFILE=paper": Plan("make", "the paper profile: about 20 hours"),
    "make peers": Plan("make", "installs FusionBench into its own venv (1.8 GB, 40 min)"),
    "make peer-ace ACE_REPO=...": Plan("make", "needs a checkout of the official ACE code"),
    "make peer-localize LS_REPO=...": Plan("make", "needs a checkout of the official Localize-and-Stitch code"),
    "python -m bench.eval --suite text8 --roofline": Plan("help", "times the evaluator on the built text8"),
    ".venv/bin/nbmerge report --profile paper -p device cuda": Plan("dry-run", _REPORT_SLOW),
    "make setup": Plan("make", "installs Debian packages and a 6 GB venv"),
    # -- merging checkpoints
    "nbmerge methods": Plan("run", check=_check_methods),
    "nbmerge methods -v": Plan("run", check=lambda r, _s: "--param density=" in r.stdout),
    "nbmerge merge --method ties --base base.safetensors --experts e1.safetensors e2.safetensors --out "
    "merged.safetensors --param density=0.2 --param scale=1.0": Plan("run", check=_check_merge),
    "nbmerge merge --method regmean --base base.safetensors --experts e1.safetensors e2.safetensors --grams "
    "g1.safetensors g2.safetensors --out merged.safetensors": Plan("run", check=_check_merge),
    "nbmerge merge --config recipe.yaml": Plan("run", check=_check_recipe),
    "nbmerge bmm-search --suite text8 --anchor ties --gram task_vector --strategy bayes --budget 20 --log "
    "trials.jsonl --out tuned.safetensors": Plan(
        "swap", _TEXT8 + "; 20 trials: 4 there",
        swaps=(("--suite text8", f"--suite {POOL}"), ("--budget 20", "--budget 4")), check=_check_bmm),
    # -- the embedded zoos
    "nbmerge zoo build text8": Plan("parse", "builds the text8 zoo: 12 to 14 minutes on 2 cores"),
    "nbmerge zoo path text8": Plan("run", check=_check_zoo_path),
    "nbmerge zoo info text8 --json": Plan("swap", _TEXT8, swaps=(("text8", POOL),), check=_check_info),
    "nbmerge eval --suite text8 --model merged.safetensors --json": Plan(
        "swap", _TEXT8, swaps=(("--suite text8", f"--suite {POOL}"),), check=_check_eval),
    "nbmerge stats --suite text8 --model base.safetensors --n 256 --out grams/": Plan(
        "swap", _TEXT8 + "; its training splits hold a few images per class, so --n 8",
        swaps=(("--suite text8", f"--suite {POOL}"), ("--n 256", "--n 8")), check=_check_stats),
    "nbmerge stats --suite text8 --sequential --n 256 --out grams_pp/": Plan(
        "swap", _TEXT8 + "; its training splits hold a few images per class, so --n 8",
        swaps=(("--suite text8", f"--suite {POOL}"), ("--n 256", "--n 8")),
        check=lambda _r, s: sorted(p.stem for p in (s / "grams_pp").glob("*.safetensors")) == sorted(POOL_TASKS)),
    "nbmerge merge --method regmean_plusplus --base base.safetensors --experts e1.safetensors e2.safetensors --grams "
    "grams_pp/t1.safetensors grams_pp/t2.safetensors --out merged.safetensors": Plan(
        "parse", "its Grams must be RegMean++'s for the same experts (the suite's own, from the command above); the "
        "merge is tested in tests/test_regmean_plusplus.py"),
    "nbmerge adamerging --suite text8 --steps 500 --out coefficients.safetensors": Plan(
        "swap", _TEXT8 + "; 500 steps: 3 there",
        swaps=(("--suite text8", f"--suite {POOL}"), ("--steps 500", "--steps 3")),
        check=lambda r, s: (s / "coefficients.safetensors").exists() and "merge with" in r.stdout),
    "nbmerge merge --method adamerging --base base.safetensors --experts e1.safetensors e2.safetensors --param "
    "coefficients=coefficients.safetensors --out merged.safetensors": Plan(
        "parse", "its coefficients must be learned for the same experts (the suite's own, from the command above); the "
        "merge is tested in tests/test_adamerging.py"),
    "nbmerge localize --suite text8 --out masks.safetensors": Plan(
        "swap", _TEXT8 + "; 10 epochs of 64 examples per class: 1 epoch of 2 there",
        swaps=(("--suite text8", f"--suite {POOL} --epochs 1 --shots 2 --sparsity 0.01"),),
        check=lambda r, s: (s / "masks.safetensors").exists() and "merge with" in r.stdout),
    "nbmerge merge --method localize_stitch --base base.safetensors --experts e1.safetensors e2.safetensors --param "
    "masks=masks.safetensors --out merged.safetensors": Plan(
        "parse", "its masks must be learned for the same experts (the suite's own, from the command above); the "
        "merge is tested in tests/test_localize_stitch.py"),
    # -- real CLIP checkpoints
    "nbmerge pool import clip-vit-b32-8 --checkpoints /data/ckpt/ViT-B-32 --data-root /data/datasets --device cuda":
        Plan("run", check=_check_pool_import),
    "nbmerge zoo info clip-vit-b32-8": Plan("run", check=_check_pool_info),
    "nbmerge report -p suite clip-vit-b32-8 -p suites '[clip-vit-b32-8]' -p tasks '[MNIST, SVHN, EuroSAT]' -p "
    "device cuda": Plan("dry-run", _REPORT_SLOW + "; test_one_report_on_the_fake_pool runs its tour with --smoke",
                        check=_check_clip_report),
    ".venv/bin/papermill notebooks/10_ace.ipynb out.ipynb -p suite clip-vit-b32-8 -y 'suites: [clip-vit-b32-8]' -p "
    "checkpoints /data/ckpt/ViT-B-32 -p data_root /data/datasets -p device cuda": Plan(
        "prepare", "ace at its default parameters takes minutes even on the fake pool", check=_check_papermill),
    "nbmerge pool import clip-tiny-3 --tasks MNIST,EuroSAT,SVHN --checkpoints /tmp/fake/ckpt --data-root "
    "/tmp/fake/data": Plan("run", check=_check_fake_import),
    "pip install h5py": Plan("not-run", "installs from PyPI: the tests are offline"),
    "pip install 'nbmerge[distributed]'": Plan("not-run", "installs Ray from PyPI: the tests are offline"),
    "pip install nbmerge": Plan("not-run", "installs from PyPI: the tests are offline (tests/test_core_install.py runs "
                                          "nbmerge merge with only the core's modules importable)"),
    "pip install 'nbmerge[zoo]'": Plan("not-run", "installs from PyPI: the tests are offline (tests/test_core_install.py "
                                                  "checks the error that prints it)"),
    "nbmerge merge --method ties --base models/llama --experts models/math models/code adapters/chat-lora --out "
    "merged/ --param density=0.2": Plan("parse", "needs Llama-sized folders and an adapter the user brings; folder "
                                                 "outputs and adapters are tested on tiny random language models "
                                                 "(tests/test_hf.py, tests/test_adapters.py)"),
    "nbmerge perplexity --model merged/ --text held_out.txt --max-length 512 --stride 256": Plan("parse", "needs a merged causal LM and a text (tests/test_lm_pools.py runs perplexity)"),
    "nbmerge lm-eval --model merged/ --tasks hellaswag,arc_easy --limit 200": Plan("parse", "needs lm-evaluation-harness and its cached task data"),
    "nbmerge pool import glue-gpt2-7 --checkpoints /data/gpt2-glue --data-root /data/glue --device cuda": Plan("parse", "needs GPT-2 GLUE experts and GLUE files the user brings "
                                                 "(tests/test_lm_pools.py imports tiny ones)"),
    "nbmerge pool import lm-llama-3 --checkpoints /data/llama-experts --data-root /data/texts --max-length 256": Plan("parse", "needs causal-LM experts the user brings"),
    "nbmerge report --only 20_bmm_benchmark -p suite glue-gpt2-7 -p suites '[\"glue-gpt2-7\"]'": Plan("parse", "needs the imported pool (tests/test_lm_notebooks.py runs "
                                                      "every notebook on tiny LM pools)"),
    "nbmerge merge --method ties --base models/gpt2 --experts models/gpt2_cola models/gpt2_sst2 models/gpt2_rte "
    "--out merged/": Plan("parse", "needs GPT-2 GLUE experts the user brings (tests/test_lm_pools.py merges tiny "
                                   "ones and loads every task's folder with from_pretrained)"),
    "make peer-mergekit": Plan("make", "installs mergekit 0.1.5 into its own venv and merges 1.1 B-parameter "
                                       "models: about 30 minutes"),
    "pip install 'nbmerge[lm-eval]'": Plan("not-run", "installs from PyPI: the tests are offline"),
    "python -m bench.distributed": Plan("help", "starts a local Ray cluster and runs searches: minutes"),
    "nbmerge bmm-search --suite micro --anchor task_arithmetic --gram task_vector --budget 20 --workers 2 "
    "--log trials.jsonl": Plan("parse", "starts a local Ray cluster (tests/test_distributed_search.py runs it, "
                                        "marked ray)"),
    "python -m bench.gpu --out reports/gpu_check": Plan("help", "needs a GPU; minutes"),
    "python -m bench.memory --out reports/memory": Plan("help", "merges 20 ViT-B/32-sized experts: minutes"),
    "python -m nbmerge.report.lab notebooks/10_ace.ipynb --out lab.json": Plan(
        "help", "runs a text8 notebook in JupyterLab: minutes with the default run's cache (test_report.py drives "
        "it on a small notebook)"),
    "python -m bench.lowrank": Plan("help", "merges LoRA adapters over a Llama of 2 layers, both routes: minutes "
                                            "(tests/test_bench_lowrank.py runs it at toy widths)"),
    "make peer-fusionbench": Plan("make", "installs FusionBench into its own venv (1.8 GB, 40 min)"),
    "make peer-baselines": Plan("make", "installs FusionBench and mergekit into their own venvs (3.4 GB) and merges "
                                        "ViT-B/32-sized experts: about 15 minutes"),
    "python -m bench.contention": Plan("help", "trains the text-micro suite 8 times beside a busy process: about "
                                               "12 minutes"),
    "python -m bench.contention --slice seeds --zoo-cache DIR --neighbour apart --policies adaptive threads1 procs":
        Plan("help", "needs a built text8 suite (12 minutes) and learns three AdaMerging seeds under four policies, "
                     "idle and beside a busy process in a session of its own: about 17 minutes a round"),
    "python -m bench.contention --slice seeds --zoo-cache DIR --neighbour apart --neighbour-after 20 --policies adaptive":
        Plan("help", "needs a built text8 suite (12 minutes) and learns three AdaMerging seeds idle and with a busy "
                     "process that starts 20 s in: about 8 minutes a round"),
    "python -m bench.main_job_pairs restore --report reports/contention_main_job.json --work DIR": Plan(
        "help", "writes into a work folder of the user's choosing (DIR); tests/test_bench_main_job_pairs.py runs it"),
    "python -m bench.main_job_pairs note --work DIR --part PART --how TEXT": Plan(
        "help", "edits a pair record in the user's work folder (DIR); tests/test_bench_main_job_pairs.py runs it"),
    "python -m bench.method_table --write": Plan(
        "help", "rewrites README.md itself (tests/test_docs.py checks that the table equals what it generates)"),
    # -- reports and notebooks
    "nbmerge report": Plan("dry-run", _REPORT_SLOW),
    "nbmerge report --smoke": Plan("dry-run", _REPORT_SLOW),
    "nbmerge report --only 00_tour -p suite tiny8 -p seed 1": Plan("dry-run", "builds the tiny8 zoo (minutes)"),
    "nbmerge report --smoke --check": Plan("dry-run", _REPORT_SLOW),
    "nbmerge report --only 00_tour -p suite tiny8 --dry-run": Plan(
        "run", check=lambda r, _s: "00_tour: " in r.stdout and "'suite': 'tiny8'" in r.stdout),
    "make smoke": Plan("make", _REPORT_SLOW),
    "make lab": Plan("make", "starts a JupyterLab server"),
}

#: The python blocks, by their first line, and what each must leave behind.
PYTHON_BLOCKS: dict[str, Plan] = {
    "import nbmerge": Plan("run", check=_file("iso_cts.safetensors")),
    "from nbmerge.testing import openclip_vit_shapes, random_experts, random_model": Plan(
        "run", check=lambda r, _s: all(f"{m} " in r.stdout and "moved the base by" in r.stdout
                                       for m in ("task_arithmetic", "ties", "tsv", "iso_cts", "wudi", "bmm"))),
    "from nbmerge.pools.fake import write_fake_data, write_fake_pool": Plan(
        "run", check=_file("tmp-fake/ckpt/zeroshot.pt")),
}

#: Run before the others, in this order: the commands the fixtures come from.
FIRST = ["nbmerge pool import clip-vit-b32-8 --checkpoints /data/ckpt/ViT-B-32 --data-root /data/datasets "
         "--device cuda",
         "nbmerge stats --suite text8 --model base.safetensors --n 256 --out grams/"]


def plan_key(found: Found) -> str:
    return found.text.splitlines()[0] if found.where == "python" else found.text


def commands_to_check() -> list[Found]:
    seen, out = set(), []
    for found in README_COMMANDS:
        if found.where == "inline" and found.text in MENTIONS:
            continue
        if plan_key(found) not in seen:
            seen.add(plan_key(found))
            out.append(found)
    return out


CHECKED = commands_to_check()


def test_every_readme_command_has_a_plan():
    commands = [f for f in CHECKED if f.where != "python"]
    unknown = [f.text for f in commands if f.text not in PLAN]
    assert not unknown, ("README commands this test does not know (add each to PLAN, saying how it is checked): "
                         + "; ".join(unknown))
    stale = sorted(set(PLAN) - {f.text for f in commands})
    assert not stale, f"PLAN entries the README no longer prints: {stale}"
    blocks = [plan_key(f) for f in CHECKED if f.where == "python"]
    assert sorted(blocks) == sorted(PYTHON_BLOCKS), f"python blocks changed: {blocks}"
    assert sorted(y.splitlines()[0] for y in README_YAML) == sorted(YAML_FILES), "yaml blocks changed"
    for text, plan in PLAN.items():
        assert plan.mode in ("run", "swap", "dry-run", "prepare", "parse", "help", "make", "not-run"), text
        assert plan.mode == "run" or plan.why, f"{text}: say why it is not run as printed"


def test_reading_the_readme():
    assert shell_commands("a \\\n   b --x 'y # z'  # a comment\n# a whole-line comment\n\nc") == ["a b --x 'y # z'",
                                                                                                    "c"]
    assert strip_comment('p -y "k: [a]"   # note') == 'p -y "k: [a]"'
    texts = [f.text for f in README_COMMANDS]
    assert "nbmerge methods" in texts and "make lab" in texts  # fenced blocks: the first and the last
    assert any(t.startswith("nbmerge report -p suite clip-vit-b32-8") and t.endswith("-p device cuda")
               for t in texts)  # a continuation line with a comment
    assert "nbmerge merge --config recipe.yaml" in texts  # inline


# ----------------------------------------------------------------------------------------------------- fixtures

def _shim(path: Path, line: str) -> None:
    path.write_text(f"#!/bin/sh\n{line}\n")
    path.chmod(0o755)


def _environment(scratch: Path) -> dict:
    bin_dir = scratch / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = shlex.quote(sys.executable)
    _shim(bin_dir / "python", f'exec {python} "$@"')
    _shim(bin_dir / "nbmerge", f'exec {python} -m nbmerge "$@"')
    _shim(bin_dir / "papermill", f'exec {python} -m papermill "$@"')
    kernel = scratch / "jupyter" / "kernels" / "nbmerge"  # what `make setup` registers (ipykernel install)
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "nbmerge (.venv)", "language": "python"}))
    (scratch / "notebooks").symlink_to(REPO / "notebooks")  # papermill's input, read only
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", NBMERGE_CACHE=str(scratch / "cache"),
               JUPYTER_PATH=str(scratch / "jupyter"), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               PYTHONPATH=os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p]),
               OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"), MPLBACKEND="Agg")
    return env


def substitute(text: str, scratch: Path, fake: Path) -> str:
    for old, new, _why in SUBSTITUTIONS:
        text = text.replace(old, new.format(scratch=scratch, fake=fake))
    return text


def _git_state() -> str:
    done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO, capture_output=True,
                          text=True)
    return done.stdout if done.returncode == 0 else "not a git checkout"


@dataclass
class Scratch:
    root: Path
    fake: Path
    env: dict
    results: dict = field(default_factory=dict)

    def shell(self, command: str, cwd: Optional[Path] = None) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", command], cwd=cwd or self.root, env=self.env, capture_output=True,
                              text=True, timeout=TIMEOUT)

    def executed(self, found: Found) -> str:
        """The command line (or script) run for ``found``: the README's text, substituted and swapped."""
        text = substitute(found.text, self.root, self.fake)
        plan = PLAN.get(found.text) or PYTHON_BLOCKS[plan_key(found)]
        for old, new in plan.swaps:
            assert old in text, f"{found.text}: the swap {old!r} no longer applies"
            text = text.replace(old, new)
        if plan.mode == "dry-run":
            text += " --dry-run"
        elif plan.mode == "prepare":
            text += " --prepare-only"
        return text

    @contextlib.contextmanager
    def inside(self):
        """The scratch folder as working directory and its environment, for an in-process call."""
        old_cwd, old_env = os.getcwd(), dict(os.environ)
        os.chdir(self.root)
        os.environ.update(self.env)
        try:
            yield
        finally:
            os.chdir(old_cwd)
            os.environ.clear()
            os.environ.update(old_env)

    def nbmerge(self, argv: list[str]) -> subprocess.CompletedProcess:
        """``nbmerge ARGV`` through the console script's own entry point (``nbmerge.cli:main``), in this process:
        a subprocess per command would spend most of this file's time importing torch again."""
        from nbmerge.cli import main

        out, err = io.StringIO(), io.StringIO()
        with self.inside(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse: --help, or a usage error
                code = exc.code if isinstance(exc.code, int) else 1
        return subprocess.CompletedProcess(["nbmerge", *argv], code, out.getvalue(), err.getvalue())

    def run(self, found: Found) -> subprocess.CompletedProcess:
        text = self.executed(found)
        argv = None if found.where == "python" else shlex.split(text)
        if found.where == "python":
            script = self.root / f"readme_block_{len(self.results)}.py"
            script.write_text(text)
            result = self.shell(f"python {script.name}")
        elif Path(argv[0]).name == "nbmerge" and argv[0] in ("nbmerge", ".venv/bin/nbmerge"):
            result = self.nbmerge(argv[1:])
        else:
            result = self.shell(text)
        self.results[plan_key(found)] = result
        return result


def _fixture_files(scratch: Path) -> None:
    """The pool's checkpoints under the names the README's commands use."""
    pool = scratch / "cache" / "pools" / POOL
    models = scratch / "models"
    models.mkdir()
    for source, names in ((pool / "base.safetensors", ["base.safetensors", "models/base.safetensors"]),
                          (pool / "experts" / "MNIST.safetensors", ["e1.safetensors", "models/mnist.safetensors"]),
                          (pool / "experts" / "SVHN.safetensors", ["e2.safetensors", "models/svhn.safetensors"])):
        for name in names:
            shutil.copyfile(source, scratch / name)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    pytest.importorskip("open_clip")
    from nbmerge.pools.fake import write_fake_data, write_fake_pool

    before = _git_state()
    root = tmp_path_factory.mktemp("readme")
    fake = root / "fake"
    write_fake_data(fake / "datasets", POOL_TASKS, n_per_class=2, image_size=28)
    write_fake_pool(fake / "ckpt" / "ViT-B-32", POOL_TASKS, fmt="open_clip")
    for body in README_YAML:
        (root / YAML_FILES[body.splitlines()[0]]).write_text(body)
    state = Scratch(root, fake, _environment(root))
    by_text = {f.text: f for f in CHECKED}
    for text in FIRST:
        result = state.run(by_text[text])
        assert result.returncode == 0, f"{state.executed(by_text[text])}\n{result.stderr}"
        if text.startswith("nbmerge pool import"):
            _fixture_files(root)
    for name, task in (("g1", "MNIST"), ("g2", "SVHN")):
        shutil.copyfile(root / "grams" / f"{task}.safetensors", root / f"{name}.safetensors")
    yield state
    assert _git_state() == before, "a README command changed the repository"


# -------------------------------------------------------------------------------------------------------- tests

def _parse_nbmerge(text: str) -> argparse.Namespace:
    from nbmerge.cli import build_parser

    argv = shlex.split(text)
    assert Path(argv[0]).name == "nbmerge", text
    try:
        return build_parser().parse_args(argv[1:])
    except SystemExit as exc:
        raise AssertionError(f"{text}: the CLI refuses it (exit {exc.code})") from None


def _help_lists_options(text: str) -> None:
    """``python -m MODULE [SUBCOMMAND] --help`` (run in this process, as ``-m`` runs it) lists every option ``text``
    uses."""
    argv = shlex.split(text)
    assert argv[:2] == ["python", "-m"], text
    out, old_argv = io.StringIO(), sys.argv
    sys.argv = [argv[2], *[a for a in argv[3:4] if not a.startswith("-")], "--help"]
    try:
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exc:
            runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
    finally:
        sys.argv = old_argv
    assert exc.value.code in (0, None), f"{argv[2]} --help exits {exc.value.code}"
    for option in (a.split("=")[0] for a in argv[3:] if a.startswith("--")):
        assert option in out.getvalue(), f"{text}: {option} is not an option of {argv[2]}"


def _make_n(text: str) -> None:
    argv = shlex.split(text)
    assert argv[0] == "make", text
    if shutil.which("make") is None:
        pytest.skip("no make here")
    result = subprocess.run(["make", "-n", *argv[1:]], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"{text}: {result.stderr}"
    assert result.stdout.strip(), f"{text}: the target does nothing"


@pytest.mark.parametrize("found", CHECKED, ids=lambda f: plan_key(f)[:70])
def test_readme_command(scratch, found):
    plan = PLAN.get(found.text) or PYTHON_BLOCKS.get(plan_key(found))
    assert plan is not None, f"not in PLAN: {found.text}"  # test_every_readme_command_has_a_plan says more
    if plan.mode == "not-run":
        pytest.skip(f"not run: {plan.why}")
    if plan.mode == "make":
        return _make_n(found.text)
    if plan.mode == "help":
        return _help_lists_options(found.text)
    if plan.mode == "parse":
        _parse_nbmerge(found.text)
        return
    result = scratch.results.get(plan_key(found)) or scratch.run(found)
    assert result.returncode == 0, f"{scratch.executed(found)}\nstdout: {result.stdout[-2000:]}\n" \
                                   f"stderr: {result.stderr[-3000:]}"
    assert "Traceback" not in result.stderr, result.stderr
    if plan.mode == "dry-run":
        assert "nothing was run or written" in result.stdout
    if plan.check:
        plan.check(result, scratch.root)


def test_the_bmm_search_resumes_when_rerun(scratch):
    """The README: "resumable: rerun the same command after an interruption" (here: after it finished, every
    trial comes back from the log and the search does no new work)."""
    found = next(f for f in CHECKED if f.text.startswith("nbmerge bmm-search"))
    if plan_key(found) not in scratch.results:
        scratch.run(found)
    again = scratch.nbmerge(shlex.split(scratch.executed(found))[1:])
    assert again.returncode == 0, again.stderr
    assert re.search(r"\((\d+) trials, \1 from the log\)", again.stdout), again.stdout


def test_one_report_on_the_fake_pool(scratch):
    """The CLIP `nbmerge report` command, with --smoke, only the tour (the one notebook run here) and --out in the
    scratch folder: it runs on the imported pool, and no cell draws a figure twice (issue 18: "the tour's Pareto
    figure is drawn twice"; the smoke parameters turn the Pareto preview on)."""
    import nbformat

    found = next(f for f in CHECKED if f.text.startswith(f"nbmerge report -p suite {POOL}"))
    out = scratch.root / "reports"
    command = substitute(found.text, scratch.root, scratch.fake) + f" --smoke --only 00_tour --out {out}"
    result = scratch.shell(command)
    assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    (run_dir,) = (out / "runs").iterdir()
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
    nb = nbformat.read(str(run_dir / "00_tour.ipynb"), as_version=4)
    images = {i: sum("image/png" in o.get("data", {}) or "<img" in str(o.get("data", {}).get("text/html", ""))
                     for o in c.outputs)
              for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    twice = {i: n for i, n in images.items() if n > 1}
    assert not twice, f"cells that draw more than one image: {twice}"
    (preview,) = [i for i, c in enumerate(nb.cells) if "tour.pareto_preview(" in c.source]
    assert images[preview] == 1, "the Pareto preview draws no figure"
    assert sum(images.values()) >= 6  # geometry, interference, spectra, α curves, comparison, Pareto preview


# ------------------------------------------------------------------------------------------------------- --help

def _subparsers(parser: argparse.ArgumentParser, path=("nbmerge",)):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                assert helps.get(name), f"{' '.join(path)} {name}: no help text"
                yield from _subparsers(sub, path + (name,))


def test_every_option_has_help_text():
    from nbmerge.cli import build_parser

    missing = [f"{' '.join(path)} {a.option_strings or a.dest}" for path, parser in _subparsers(build_parser())
               for a in parser._actions
               if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)) and not a.help]
    assert not missing, f"options without help text: {missing}"


def test_every_help_runs(capsys):
    from nbmerge.cli import build_parser, main

    paths = [path[1:] for path, _ in _subparsers(build_parser())]
    assert len(paths) > 10
    for path in paths:
        with pytest.raises(SystemExit) as exc:
            main([*path, "--help"])
        assert exc.value.code == 0, path
        out = capsys.readouterr().out
        assert out.startswith("usage: nbmerge"), path
        if not path:  # `nbmerge --help` names every command (the entry point itself: tests/test_cli.py)
            for command in ("methods", "merge", "zoo", "pool", "eval", "stats", "bmm-search", "report"):
                assert command in out


def test_a_dry_run_checks_and_writes_nothing(scratch):
    """What the ``dry-run`` mode relies on: ``report --dry-run`` refuses what a run would refuse, in one line, and
    writes nothing (no run folder, no index, no zoo build)."""
    out = scratch.root / "dry-reports"
    bad = scratch.nbmerge(["report", "--only", "00_tour", "-p", "suite", "nosuch", "--out", str(out), "--dry-run"])
    assert bad.returncode == 2 and "unknown suite 'nosuch'" in bad.stderr and "Traceback" not in bad.stderr
    good = scratch.nbmerge(["report", "--smoke", "--out", str(out), "--dry-run"])
    assert good.returncode == 0, good.stderr
    assert not out.exists() and not (scratch.root / "cache" / "zoo").exists()
