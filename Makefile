# Every target sets itself up: a fresh machine needs only python3 (3.10+) and the package registries.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.nbmerge-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup test report peer-fusionbench lab clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest

# The main job. Today the only report is the engine's peer check; the notebook report suite
# (`nbmerge report`, issue #4) replaces this target's body when it lands.
report: peer-fusionbench

peer-fusionbench: $(STAMP)
	$(PY) -m nbmerge.peers.fusionbench --out reports

lab: $(STAMP)
	$(PY) -m ipykernel install --user --name nbmerge --display-name "nbmerge (.venv)"
	$(VENV)/bin/jupyter lab notebooks/

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
