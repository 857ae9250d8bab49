"""A store written by an earlier version opens with no manual step: the committed store files
of this schema and the previous one (tests/fixtures/make_stores.py wrote them) are copied into
a fresh data folder and used through the CLI."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from colony_tasks.cli import cli
from colony_tasks.store.schema import LATEST, MIGRATIONS
from tests.support import TESTS

PREVIOUS = MIGRATIONS[-2].version
FIXTURES = TESTS / "fixtures"
STORES = [FIXTURES / f"store-v{LATEST}.db", FIXTURES / f"store-v{PREVIOUS}.db"]
# Stores of earlier releases, kept as they were written: every one must still open.
EARLIER = sorted(set(FIXTURES.glob("store-v*.db")) - set(STORES))


def version_of(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def test_the_fixtures_are_this_schema_and_the_previous_one():
    assert [version_of(p) for p in STORES] == [LATEST, PREVIOUS]


@pytest.mark.parametrize("fixture", STORES + EARLIER, ids=lambda p: p.stem)
def test_an_earlier_store_opens_and_works_with_no_manual_step(
    fixture: Path, home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    home.mkdir()
    shutil.copyfile(fixture, home / "colony.db")
    (home / "colony.db").chmod(0o600)
    monkeypatch.chdir(repo)

    def run(*args: str) -> str:
        result = CliRunner().invoke(cli, list(args))
        assert result.exit_code == 0, result.output
        return result.output

    status = json.loads(run("status", "--json"))
    assert status["schema_version"] == LATEST
    tasks = {t["title"]: t for t in json.loads(run("tasks", "--json"))}
    assert "shop@main" in tasks
    shown = run("tasks", "show", str(tasks["shop@main"]["id"]))
    assert "Staging is down" in shown and "src/retry.py" in shown
    hits = json.loads(run("search", "backoff jitter", "--json"))
    assert any("jitter" in h["snippet"] for h in hits), hits
    posted = run("post", str(tasks["shop@main"]["id"]), "after the upgrade", "--as", "alice")
    assert "Posted note" in posted
    doctor = json.loads(CliRunner().invoke(cli, ["doctor", "--json"]).output)
    checks = {c["check"]: c for c in doctor["checks"]}
    for name in ("schema", "tables", "integrity", "fts"):
        assert checks[name]["ok"], checks[name]
    assert version_of(home / "colony.db") == LATEST
