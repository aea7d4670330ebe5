# Two commands do all the set-up:  `make lab` runs the course, `make test` runs every test.
# Both create .venv on first use and work as root or as an ordinary user.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# A CPU build of torch keeps the environment small (about 1.5 GB). A GPU user runs
#   make lab TORCH_SPEC=torch            (the CUDA build from PyPI, several GB)
# or points VENV at an environment that already has a CUDA torch.
TORCH_SPEC ?= torch==2.13.0
PORT ?= 8888
# The chapter `make lab` opens first.
FIRST_CHAPTER ?= 00_setup_check.py
# JupyterLab refuses to run as root unless told to; an ordinary user needs no flag.
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
PIP := $(BIN)/python -m pip --disable-pip-version-check -q

.PHONY: lab test test-fast lint notebooks suite-cost clean help

help:
	@echo "make lab    set up (first time) and start JupyterLab on http://127.0.0.1:$(PORT)"
	@echo "make test   set up (first time) and run every test: lint, units, nbval, browser"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.lab-ready: $(BIN)/python pyproject.toml jupyter/overrides.json jupyter/jupyter_server_config.json scripts/configure_jupyter.py
	$(PIP) install --upgrade pip
	$(PIP) install "$(TORCH_SPEC)"
	$(PIP) install -e ".[lab]"
	$(BIN)/python scripts/configure_jupyter.py
	touch $@

$(VENV)/.test-ready: $(VENV)/.lab-ready
	$(PIP) install -e ".[lab,test]"
	scripts/ensure_chromium.sh
	touch $@

lab: $(VENV)/.lab-ready
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) --no-browser \
		--ServerApp.root_dir=notebooks --LabApp.default_url=/lab/tree/$(FIRST_CHAPTER) $(ROOT_FLAG)

# Each chapter executes once (nbval); the browser tests open chapters without re-running them,
# except chapter 01, run once for the widgets. Property tests use the `ci` hypothesis profile
# (HYPOTHESIS_PROFILE=nightly for the long hunt). `benchmarks/suite_cost.py --suite` times each part.
test: $(VENV)/.test-ready
	$(BIN)/ruff check labkit tests benchmarks notebooks scripts
	$(BIN)/python -m pytest -q

# Everything but the browser tests and the slowest property tests: a quick loop while editing.
test-fast: $(VENV)/.test-ready
	$(BIN)/ruff check labkit tests benchmarks notebooks scripts
	$(BIN)/python -m pytest -q -m "not browser and not slow"

lint: $(VENV)/.test-ready
	$(BIN)/ruff check labkit tests benchmarks notebooks scripts

# Re-execute every notebook source (.py) into its paired .ipynb with fresh outputs.
notebooks: $(VENV)/.lab-ready
	$(BIN)/python scripts/execute_notebook.py notebooks/[0-9]*.py

suite-cost: $(VENV)/.test-ready
	$(BIN)/python benchmarks/suite_cost.py

clean:
	rm -rf $(VENV) tests/browser/screenshots
