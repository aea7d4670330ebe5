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
# Packages install with uv, fetched into .venv by its pip, where uv can be had, else with pip
# (scripts/pip_install.py: the same versions, a fifth of the time). INSTALLER=pip asks for pip.
INSTALL := $(BIN)/python scripts/pip_install.py --python $(BIN)/python
# The workshop's proxy (JupyterHub's configurable-http-proxy, from npm).
WORKSHOP_PROXY_BIN := workshop/node_modules/.bin/configurable-http-proxy

.PHONY: lab test test-fast test-pytest chromium lint notebooks suite-cost site clean help workshop

help:
	@echo "make lab    set up (first time) and start JupyterLab on http://127.0.0.1:$(PORT)"
	@echo "make test   set up (first time) and run every test: lint, units, nbval, browser"
	@echo "make workshop  JupyterHub for a room on http://127.0.0.1:8000 (workshop/README.md)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.lab-ready: $(BIN)/python pyproject.toml jupyter/overrides.json jupyter/jupyter_server_config.json scripts/configure_jupyter.py
	$(BIN)/python scripts/install_torch.py --python $(BIN)/python --spec "$(TORCH_SPEC)"
	$(INSTALL) -e ".[lab]"
	$(BIN)/python scripts/configure_jupyter.py
	touch $@

# `make test`'s set-up, three things at once (a fresh clone spends its set-up here): Python's
# packages (torch, then every extra in one resolution), npm's proxy for the workshop tests, and
# Chromium (apt-get, as root, when missing). It also satisfies `make lab`'s set-up.
$(VENV)/.test-ready: $(BIN)/python pyproject.toml jupyter/overrides.json jupyter/jupyter_server_config.json scripts/configure_jupyter.py workshop/package.json workshop/package-lock.json
	@echo "Setting up the test environment: Python packages, npm and Chromium at once (each one's output when it is done)..."
	$(MAKE) --no-print-directory -j3 --output-sync=target $(VENV)/.pip-test-ready $(WORKSHOP_PROXY_BIN) chromium
	touch $(VENV)/.lab-ready $@

# torch's ~2,000 modules are byte-compiled on the second core while the extras install, so that
# the test workers, which import torch at the same moment, do not each compile them (uv writes
# no byte code; pip reads PIP_NO_COMPILE=0 as --no-compile). A module compileall could not
# compile is compiled when first imported.
$(VENV)/.pip-test-ready: $(BIN)/python pyproject.toml jupyter/overrides.json jupyter/jupyter_server_config.json scripts/configure_jupyter.py
	PIP_NO_COMPILE=0 $(BIN)/python scripts/install_torch.py --python $(BIN)/python --spec "$(TORCH_SPEC)"
	$(BIN)/python -m compileall -q -j 1 "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/torch" >/dev/null 2>&1 & compiling=$$!; \
	$(INSTALL) -e ".[lab,test,site,workshop]"; installed=$$?; wait $$compiling; exit $$installed
	$(BIN)/python scripts/configure_jupyter.py
	touch $@

chromium:
	scripts/ensure_chromium.sh

lab: $(VENV)/.lab-ready
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) --no-browser \
		--ServerApp.root_dir=notebooks --LabApp.default_url=/lab/tree/$(FIRST_CHAPTER) $(ROOT_FLAG)

# Each chapter executes once (nbval); the browser tests open chapters without re-running them,
# except chapter 01, run once for the widgets. Property tests use the `ci` hypothesis profile
# (HYPOTHESIS_PROFILE=nightly for the long hunt). `benchmarks/suite_cost.py --suite` times each part.
# pytest runs in TEST_WORKERS pytest-xdist workers, a file in one worker (tests/conftest.py):
# on two cores, three workers let the waits (a browser, a server starting, a kernel culled after
# a minute) overlap the CPU-bound chapters. Chapters run at the test suite's CPU sizes
# (LABKIT_SIZES=ci, labkit/core/env.py); idle OpenMP threads sleep instead of spinning on a core
# another worker needs (OMP_WAIT_POLICY=PASSIVE). TEST_WORKERS=0 runs it in one process.
# Byte code is written (PYTHONDONTWRITEBYTECODE cleared): where it is set, as on our CI machines,
# each of the suite's Python processes (workers, kernels, ranks, DataLoader workers, servers)
# compiled numpy, sympy, matplotlib and the rest from source again: a process importing torch,
# numpy, sympy, matplotlib, hypothesis, IPython and onnx spent 10.4 CPU-s, 4.9 s with byte code.
TEST_WORKERS ?= 3
TEST_ENV := LABKIT_SIZES=ci OMP_WAIT_POLICY=PASSIVE PYTHONDONTWRITEBYTECODE=
PYTEST_RUN = $(TEST_ENV) $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup
PYTEST_ARGS ?=

test: lint
	$(PYTEST_RUN) $(PYTEST_ARGS)

# Everything but the browser tests and the slowest property tests: a quick loop while editing.
test-fast: lint
	$(PYTEST_RUN) -m "not browser and not slow" $(PYTEST_ARGS)

# `make test` without its lint (benchmarks/suite_cost.py --suite times the two apart).
test-pytest: $(VENV)/.test-ready
	$(PYTEST_RUN) $(PYTEST_ARGS)

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
	$(INSTALL) -e ".[lab,site]"
	touch $@

# The course as a static website in site/ (open site/index.html), built offline from the
# executed notebooks (the reference GPU's where recorded); nothing is executed.
site: $(VENV)/.site-ready
	$(BIN)/python scripts/build_site.py --out site

# JupyterHub for a workshop room: every learner their own server, home and copy of the course.
# WORKSHOP_PASSWORD (the room's code) and WORKSHOP_ADMIN_PASSWORD must be set; see workshop/README.md.

$(VENV)/.workshop-ready: $(VENV)/.lab-ready pyproject.toml
	$(INSTALL) -e ".[lab,workshop]"
	touch $@

$(WORKSHOP_PROXY_BIN): workshop/package.json workshop/package-lock.json
	cd workshop && npm ci --no-audit --no-fund
	touch $@

workshop: $(VENV)/.workshop-ready $(WORKSHOP_PROXY_BIN)
	cd workshop && $(abspath $(BIN))/jupyterhub -f jupyterhub_config.py

clean:
	rm -rf $(VENV) tests/browser/screenshots
