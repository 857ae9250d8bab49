# Two commands from a fresh clone: `make test` (creates .venv, installs, lints, tests).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
EXTRAS ?= test
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
comma := ,

.PHONY: install test test-slow test-all lint format demo bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Bytecode is compiled at install time, as a regular pip install does: hooks start a new
# process per agent event and must not recompile the package each time.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	$(BIN)/python -m compileall -q colony_tasks mcp_server > /dev/null
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

# CI: everything, with the optional sentence-transformers backend installed.
test-all:
	$(MAKE) test
	$(MAKE) test-slow EXTRAS=test,minilm

demo: install
	$(BIN)/python -m colony_tasks.demo

bench: install
	$(BIN)/python -m compileall -q colony_tasks mcp_server > /dev/null
	$(BIN)/python bench/store.py --quick
	$(BIN)/python bench/hooks.py
	$(BIN)/python bench/check.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build dist *.egg-info
