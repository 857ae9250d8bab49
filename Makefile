# Two commands from a fresh clone: `make test` (creates .venv, installs, lints, tests).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXTRAS ?= test

.PHONY: install test test-slow lint format demo bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $(STAMP)

install: $(STAMP)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint
	$(BIN)/python -m pytest -m "not slow"

test-slow: install
	$(BIN)/python -m pytest -m "slow"

bench: install
	$(BIN)/python bench/store.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build dist *.egg-info
