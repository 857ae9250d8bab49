# Two commands from a fresh clone: `make test` (creates .venv, installs, lints, tests).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
EXTRAS ?= test
comma := ,
STAMP = $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))

.PHONY: install test test-slow test-browser test-agents agents-latest test-all browser postgres tmux test-postgres lint format demo bench bench-team clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Bytecode is compiled at install time, as a regular pip install does: hooks start a new
# process per agent event and must not recompile the package each time.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	$(BIN)/python -m compileall -q colony_tasks > /dev/null
	touch $(STAMP)

install: $(STAMP)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The default suite: deterministic, no browser, no agent CLIs (about 3 minutes on 2 cores).
test: lint
	$(BIN)/python -m pytest -m "not slow and not stress and not browser and not agents and not postgres"

test-slow: install
	$(BIN)/python -m pytest -m "slow or stress"

# Debian's Chromium for the viewer's browser tests (Playwright drives it; nothing downloads).
browser:
	@test -x /usr/bin/chromium || (apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium > /dev/null)

# tmux for the agents suite's interactive Claude Code sessions (Notification fires only there).
tmux:
	@command -v tmux > /dev/null || (apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux > /dev/null)

# Debian's PostgreSQL server binaries for team mode's tests (the fixtures run initdb + pg_ctl as
# an unprivileged user in a temp folder on a free loopback port; no service is started here).
postgres:
	@ls /usr/lib/postgresql/*/bin/pg_ctl > /dev/null 2>&1 || (apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql > /dev/null)

test-postgres: install postgres
	$(BIN)/python -m pytest -m "postgres"

test-browser: install browser
	$(BIN)/python -m pytest -m "browser"

# The real Claude Code and Codex CLIs (pinned in tests/agents/versions.json, installed from npm
# into ~/.cache/colony-tasks-agents on first use) run scripted sessions against colony-tasks.
test-agents: install tmux
	$(BIN)/python -m pytest -m agents tests/agents

# Not in CI: the same suite against the newest published CLIs, to find drift before users do.
agents-latest: install tmux
	COLONY_TASKS_AGENT_VERSIONS=latest $(BIN)/python -m pytest -m agents tests/agents

# CI after `make test`: the whole suite again with the optional sentence-transformers backend
# installed (its tests skip without it), plus the slow, stress, browser and agents suites.
test-all: browser postgres tmux
	$(MAKE) install EXTRAS=test,minilm
	$(BIN)/python -m pytest

# Keeps its store and prints the command that opens the viewer on it (DEMO_ARGS=--discard: not).
demo: install
	$(BIN)/python demo/demo.py $(DEMO_ARGS)

# Benchmarks print medians and same-run ratios; bench/check.py is the hook latency gate
# (fails when a gated hook's p50 exceeds 1.2x the baseline). Full-size runs: drop --quick.
bench: install
	$(BIN)/python -m compileall -q colony_tasks > /dev/null
	$(BIN)/python bench/hooks.py
	$(BIN)/python bench/check.py
	$(BIN)/python bench/store.py --quick
	cd bench && ../$(BIN)/python search.py --quick && ../$(BIN)/python search_eval.py
	$(BIN)/python bench/mcp.py
	$(BIN)/python bench/work.py --quick
	$(BIN)/python bench/first_use.py --n 15

bench-team: install postgres
	$(BIN)/python bench/team.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build dist *.egg-info
