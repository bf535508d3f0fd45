# Everything runs from a local virtual environment that these targets create on first use.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install test test-fast demo bench lint clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -n 2

# The edit-run loop: everything but the end-to-end tests (marked slow).
test-fast: $(STAMP)
	$(PY) -m pytest -n 2 -m "not slow"

demo: $(STAMP)
	$(PY) -m clmgit.sandbox.demo

bench: $(STAMP)
	$(PY) -m bench

lint: $(STAMP)
	$(VENV)/bin/ruff check clmgit tests bench
	$(VENV)/bin/mypy clmgit

clean:
	rm -rf $(VENV) build *.egg-info
