# Every target sets itself up: a fresh machine needs only python3 (3.10+) and the package registries.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.nbmerge-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

# Debian packages the embedded zoo's data comes from (data_manifests/ records versions and checksums).
# chromium: headless, for the test that opens the HTML reports in a real browser. The fortune collections and
# WordNet are the text zoo's labelled text.
DEBIAN_PACKAGES := dataset-fashion-mnist fonts-noto-core fonts-noto-cjk fonts-dejavu-core fonts-liberation \
	fonts-freefont-ttf fonts-urw-base35 chromium \
	fortunes fortunes-min fortunes-debian-hints fortunes-de fortunes-it fortunes-es fortunes-ru fortunes-pl fortunes-cs fortunes-eo fortunes-bg \
	fortunes-br fortunes-mario fortunes-bofh-excuses fortune-anarchism wordnet-base

.PHONY: setup system-deps test report notebooks zoo zoo-targets peers peer-fusionbench peer-baselines peer-ace peer-localize peer-mergekit smoke lab clean

system-deps:
	@missing=$$(for p in $(DEBIAN_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages: $$missing"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

$(STAMP): pyproject.toml | system-deps
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	$(PY) -m ipykernel install --sys-prefix --name nbmerge --display-name "nbmerge (.venv)" >/dev/null
	touch $(STAMP)

setup: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest

# The main job: every zoo suite the notebooks use is built (or found cached), then every notebook runs at its
# default parameters and is rendered to offline HTML (reports/index.html); a complete run is copied into
# reports/published/ (what the repository publishes), and the default zoo's measurements into reports/zoo_text8.json.
# `make report PROFILE=paper` runs the papers' protocol scale instead (hours; nothing is published).
PROFILE ?= default
report: $(STAMP)
	$(VENV)/bin/nbmerge report --check --profile $(PROFILE) $(if $(filter default,$(PROFILE)),--publish)
	$(VENV)/bin/nbmerge zoo info text8 --json > reports/zoo_text8.json.tmp && mv reports/zoo_text8.json.tmp reports/zoo_text8.json

notebooks: $(STAMP)
	$(VENV)/bin/nbmerge report

# Every notebook with smoke parameters, then every page opened in headless Chromium (CI runs this after `make test`).
smoke: $(STAMP)
	$(VENV)/bin/nbmerge report --smoke --check

zoo: $(STAMP)
	$(VENV)/bin/nbmerge zoo build text8
	$(VENV)/bin/nbmerge zoo info text8 --json > reports/zoo_text8.json.tmp && mv reports/zoo_text8.json.tmp reports/zoo_text8.json
	@echo "wrote reports/zoo_text8.json"

# The text zoo's fitness targets (TSV-M / ISO-CTS / RegMean against TA; about 5 minutes), outside the build.
zoo-targets: $(STAMP)
	$(VENV)/bin/nbmerge zoo targets text8

# Peer checks (not part of the main job): the engine against FusionBench, in its own venv under
# ~/.cache/nbmerge/peers (1.8 GB, about 40 minutes on 2 cores), and ACE against the official code.
peers: peer-fusionbench peer-baselines

peer-fusionbench: $(STAMP)
	$(PY) -m bench.peers.fusionbench --out reports

# The added baselines (Consensus TA/TIES, TALL masks, EMR, Breadcrumbs, Model Stock) against FusionBench 0.2.33 and
# mergekit 0.1.5, each in its own venv under ~/.cache/nbmerge/peers, and RegMean++ against FusionBench's
# block-by-block driver on a random BERT, and AdaMerging's learned coefficients against FusionBench's layer-wise wrapper
# and loss on the same encoder, heads and batches; CART, PCB and TSV-C against float64 references in the tests.
peer-baselines: $(STAMP)
	$(PY) -m bench.peers.baselines --out reports
	$(PY) -m bench.peers.regmean_plusplus --out reports
	$(PY) -m bench.peers.adamerging --out reports

# Speed and memory against mergekit 0.1.5 (LGPL: run from its own venv under ~/.cache/nbmerge/peers, 1.6 GB, never
# a dependency): task arithmetic, TIES and DARE-TIES on a random 1.1 B-parameter bf16 Llama through both command
# lines (~9 GB of scratch checkpoints under /tmp, removed afterwards; ~35 minutes on 2 cores). One thread per tool by
# default, as reports/mergekit.md was measured on a shared 2-core machine; MERGEKIT_ARGS= uses every core.
MERGEKIT_ARGS ?= --threads 1 --budget-min 35
peer-mergekit: $(STAMP)
	$(PY) -m bench.mergekit --out reports/mergekit $(MERGEKIT_ARGS)

# The official ACE-Merging code has no licence: nbmerge never ships or fetches it. Point ACE_REPO at your own
# checkout of github.com/unravel-xu/ACE-Merging (outside this repository) to rerun reports/peer_ace.md.
peer-ace: $(STAMP)
	@test -n "$(ACE_REPO)" || { echo "usage: make peer-ace ACE_REPO=/path/to/ACE-Merging"; exit 2; }
	$(PY) -m bench.peers.ace_official --ace-repo $(ACE_REPO) --out reports

# Localize-and-Stitch's official code (MIT): point LS_REPO at a checkout of github.com/uiuctml/Localize-and-Stitch
# (outside this repository; nbmerge never ships or fetches it) to rerun reports/peer_localize.md.
peer-localize: $(STAMP)
	@test -n "$(LS_REPO)" || { echo "usage: make peer-localize LS_REPO=/path/to/Localize-and-Stitch"; exit 2; }
	$(PY) -m bench.peers.localize --ls-repo $(LS_REPO) --out reports

# The notebooks name the `nbmerge` kernel, which the set-up registers inside the venv; as root, Jupyter needs
# --allow-root (containers); LAB_ARGS passes anything else (e.g. LAB_ARGS="--no-browser --port 8890").
lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks/ $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
