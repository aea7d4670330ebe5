# Two commands do all the set-up:  `make lab` runs the course, `make test` runs every test.
# Both create .venv on first use and work as root or as an ordinary user.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# torch: scripts/install_torch.py takes the CPU build from PyTorch's CPU wheel index on a machine
# without an NVIDIA GPU (the default index elsewhere, or when that index cannot be reached), and
# says which it took and how big it is. TORCH_INDEX=<url> picks an index by hand; a GPU user can
# also point VENV at an environment that already has a CUDA torch.
TORCH_SPEC ?= torch==2.13.0
PORT ?= 8888
# The chapter `make lab` opens first.
FIRST_CHAPTER ?= 00_setup_check.py
# JupyterLab refuses to run as root unless told to; an ordinary user needs no flag.
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
PIP := $(BIN)/python -m pip --disable-pip-version-check -q
# The workshop's proxy (JupyterHub's configurable-http-proxy, from npm).
WORKSHOP_PROXY_BIN := workshop/node_modules/.bin/configurable-http-proxy

.PHONY: lab test test-fast lint notebooks suite-cost site clean help workshop

help:
	@echo "make lab    set up (first time) and start JupyterLab on http://127.0.0.1:$(PORT)"
	@echo "make test   set up (first time) and run every test: lint, units, nbval, browser"
	@echo "make workshop  JupyterHub for a room on http://127.0.0.1:8000 (workshop/README.md)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.lab-ready: $(BIN)/python pyproject.toml jupyter/overrides.json jupyter/jupyter_server_config.json scripts/configure_jupyter.py
	$(PIP) install --upgrade pip
	$(BIN)/python scripts/install_torch.py --python $(BIN)/python --spec "$(TORCH_SPEC)"
	$(PIP) install -e ".[lab]"
	$(BIN)/python scripts/configure_jupyter.py
	touch $@

$(VENV)/.test-ready: $(VENV)/.lab-ready $(WORKSHOP_PROXY_BIN)
	$(PIP) install -e ".[lab,test,site,workshop]"
	scripts/ensure_chromium.sh
	touch $@

lab: $(VENV)/.lab-ready
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) --no-browser \
		--ServerApp.root_dir=notebooks --LabApp.default_url=/lab/tree/$(FIRST_CHAPTER) $(ROOT_FLAG)

# Each chapter executes once (nbval); the browser tests open chapters without re-running them,
# except chapter 01, run once for the widgets. Property tests use the `ci` hypothesis profile
# (HYPOTHESIS_PROFILE=nightly for the long hunt). `benchmarks/suite_cost.py --suite` times each part.
test: lint
	$(BIN)/python -m pytest -q

# Everything but the browser tests and the slowest property tests: a quick loop while editing.
test-fast: lint
	$(BIN)/python -m pytest -q -m "not browser and not slow"

# ruff, then the import contract (labkit's layers; pyproject.toml [tool.importlinter]).
lint: $(VENV)/.test-ready
	$(BIN)/ruff check labkit tests benchmarks notebooks scripts
	$(BIN)/lint-imports

# Re-execute every notebook source (.py) into its paired .ipynb with fresh outputs.
notebooks: $(VENV)/.lab-ready
	$(BIN)/python scripts/execute_notebook.py notebooks/[0-9]*.py

suite-cost: $(VENV)/.test-ready
	$(BIN)/python benchmarks/suite_cost.py

$(VENV)/.site-ready: $(VENV)/.lab-ready
	$(PIP) install -e ".[lab,site]"
	touch $@

# The course as a static website in site/ (open site/index.html), built offline from the
# executed notebooks (the reference GPU's where recorded); nothing is executed.
site: $(VENV)/.site-ready
	$(BIN)/python scripts/build_site.py --out site

# JupyterHub for a workshop room: every learner their own server, home and copy of the course.
# WORKSHOP_PASSWORD (the room's code) and WORKSHOP_ADMIN_PASSWORD must be set; see workshop/README.md.

$(VENV)/.workshop-ready: $(VENV)/.lab-ready pyproject.toml
	$(PIP) install -e ".[lab,workshop]"
	touch $@

$(WORKSHOP_PROXY_BIN): workshop/package.json workshop/package-lock.json
	cd workshop && npm ci --no-audit --no-fund
	touch $@

workshop: $(VENV)/.workshop-ready $(WORKSHOP_PROXY_BIN)
	cd workshop && $(abspath $(BIN))/jupyterhub -f jupyterhub_config.py

clean:
	rm -rf $(VENV) tests/browser/screenshots
