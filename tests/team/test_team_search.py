"""Vector search on the PostgreSQL backend: the same pipeline as on SQLite, the same answers.

Observations are written through the core, embedded by the MCP server's embedding worker with
the default (static) embedder, and searched through ``actions.search`` on both backends.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from colony_tasks.domain import sessions
from colony_tasks.mcp_server.background import EmbeddingWorker
from colony_tasks.search import Searcher
from colony_tasks.store import open_store
from colony_tasks.usecases import actions, records
from tests.support.hookrun import EXE

pytestmark = pytest.mark.postgres

TARGET = "the viewer stylesheet breaks on narrow screens"
PARAPHRASE = "css layout on mobile phones"
DECISIONS = [
    "Retry policy: exponential backoff with jitter, max 5 attempts",
    "we agreed to use SQLite WAL mode so readers never block writers",
]
NOTES = [
    TARGET,
    "the release notes still mention the old installer",
    "pagination of the task list skips the last page",
    "the hook log rotates at one megabyte",
    "ci runner is out of disk space again",
    "migrations run in one transaction each",
    "rename the search module's fusion settings",
    "the handoff accept button is missing on the thread page",
]
PROMPTS = [
    "fix the flaky login test in the auth middleware",
    "make the retry loop stop after five attempts",
    "add a changelog entry for the relay",
]


def write_history(address: str, repo: Path) -> None:
    """The same history on any backend, through the core's use cases."""
    store = open_store(address)
    try:
        alice = sessions.register(store, "alice", agent="claude", cwd=str(repo)).session
        bob = sessions.register(store, "bob", agent="codex", cwd=str(repo)).session
        for text in DECISIONS:
            actions.record_decision(store, alice, text)
        for n, text in enumerate(NOTES):
            actions.post(store, bob if n % 2 else alice, text)
        for text in PROMPTS:
            records.record_prompt(store, bob, text)
    finally:
        store.close()


def searched(address: str) -> dict[str, list[tuple]]:
    """Hybrid (auto and forced) and keyword results for a few queries: each hit's kind,
    author, full text and score (snippets are highlighted by each backend in its own way)."""
    store = open_store(address)
    try:
        searcher = Searcher(store)
        out = {}
        for query in (PARAPHRASE, "readers block writers", "retry attempts"):
            for mode in (None, True, False):
                hits = actions.search(searcher, query, limit=8, semantic=mode)
                texts = {o.id: o.text for o in store.get_observations([h.id for h in hits])}
                out[f"{query} / {mode}"] = [(h.kind, h.author, texts[h.id], h.score) for h in hits]
        return out
    finally:
        store.close()


def test_semantic_and_hybrid_search_on_postgresql_find_the_paraphrase_as_sqlite_does(
    home: Path, repo: Path, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)  # a store's files must never land in the working folder
    results = {}
    for name, address in (("sqlite", str(tmp_path / "colony.db")), ("postgresql", pg_url)):
        write_history(address, repo)
        embedded = EmbeddingWorker(address).drain()
        assert embedded == len(DECISIONS) + len(NOTES) + len(PROMPTS)
        results[name] = searched(address)

    team = results["postgresql"]
    # Keywords alone miss the paraphrase; embeddings find it first, with either mode.
    assert team[f"{PARAPHRASE} / False"] == []
    assert team[f"{PARAPHRASE} / None"][0][2] == TARGET
    assert team[f"{PARAPHRASE} / True"][0][2] == TARGET
    assert team["readers block writers / None"][0][2] == DECISIONS[1]
    # Each backend ranks keywords with its own engine (bm25 scores, ts_rank_cd scores), but on
    # this history they agree on the order; so the fused results are the same, to the score.
    for key, hits in team.items():
        local = results["sqlite"][key]
        assert [h[:3] for h in hits] == [h[:3] for h in local], key
        if not key.endswith("False"):
            assert [h[3] for h in hits] == pytest.approx([h[3] for h in local]), key

    # A short-lived process (the CLI) searches the team store's vectors too.
    env = {**os.environ, "COLONY_TASKS_DATABASE_URL": pg_url}
    run = subprocess.run(
        [str(EXE), "search", PARAPHRASE, "--semantic", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)[0]["snippet"] == TARGET  # unhighlighted: no keyword hit
    assert list(cwd.iterdir()) == []
