"""SQLite mode when the store cannot take a write (disk full, read-only): the event is held,
not dropped, and delivered once — in order — when the store takes writes again; by the relay
(on its next event or its next tick) or by a hook applying its own event."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from colony_tasks.cli import cli
from colony_tasks.hooks.payload import request as hook_request
from colony_tasks.relay import held
from colony_tasks.relay.apply import apply_here
from colony_tasks.relay.server import LocalRelay
from colony_tasks.store.faults import storage_failure
from tests.support.hookrun import claude


def record(event: str, repo: Path, **fields: Any) -> dict[str, Any]:
    payload = claude(event, "s-held", repo, **fields)
    req = hook_request(event, "claude", payload, json.dumps(payload).encode()).to_wire()
    req["pid"] = os.getpid()  # the session's agent: this process
    return req


def prompts(home: Path) -> list[str]:
    """The prompts recorded, each cut to its first two words (the store clips long ones)."""
    db = sqlite3.connect(home / "colony.db")
    try:
        rows = db.execute("SELECT text FROM observations WHERE kind = 'prompt' ORDER BY id")
        return [" ".join(r[0].split()[:2]) for r in rows]
    finally:
        db.close()


def disk_full(conn: sqlite3.Connection) -> None:
    """No page more than the file has now: the next growth fails with SQLITE_FULL."""
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    conn.execute("PRAGMA freelist_count").fetchone()


def room(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA max_page_count = 1073741823")


def doctor_check(name: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    return {c["check"]: c for c in json.loads(result.output)["checks"]}[name]


BIG = " and more" * 600  # each prompt needs new pages


@pytest.fixture
def relay(home: Path, repo: Path):
    relay = LocalRelay()
    reply = relay.event(record("session-start", repo, source="startup"), None)
    assert "error" not in reply
    yield relay
    relay.close()


def test_disk_full_holds_the_relays_events_and_delivers_them_once_in_order(
    relay: LocalRelay, home: Path, repo: Path
):
    disk_full(relay.store.conn)
    sent = [f"prompt {i}" for i in range(12)]
    replies = [relay.event(record("user-prompt-submit", repo, prompt=p + BIG), None) for p in sent]
    assert {"error": "held"} in replies  # the store refused, the events were kept
    assert held.waiting() and held.counts()["held"] >= 1
    assert len(prompts(home)) < 12
    room(relay.store.conn)
    relay.tick()  # the relay tries again on its own
    assert prompts(home) == sent  # every one, once, in the order the agent sent them
    assert not held.waiting() and held.counts() == {"held": 0, "stuck": 0}
    relay.tick()
    assert prompts(home) == sent


def test_a_read_only_store_holds_and_the_next_event_delivers_first(
    relay: LocalRelay, home: Path, repo: Path
):
    relay.store.conn.execute("PRAGMA query_only = 1")  # writes fail as on a read-only mount
    reply = relay.event(record("user-prompt-submit", repo, prompt="while read-only"), None)
    assert reply == {"error": "held"} and prompts(home) == []
    waiting = doctor_check("held events")
    assert not waiting["ok"] and waiting["detail"].startswith("1 waiting")
    relay.store.conn.execute("PRAGMA query_only = 0")
    relay.event(record("user-prompt-submit", repo, prompt="after"), None)
    assert prompts(home) == ["while read-only", "after"]
    assert doctor_check("held events")["ok"]


def test_an_event_held_twice_is_delivered_once(relay: LocalRelay, home: Path, repo: Path):
    """A hook whose relay held its event falls back and holds it too: one row, one prompt."""
    req = record("user-prompt-submit", repo, prompt="twice")
    relay.store.conn.execute("PRAGMA query_only = 1")
    assert relay.event(req, None) == {"error": "held"}
    assert held.hold(req, "test: a second holder")
    relay.store.conn.execute("PRAGMA query_only = 0")
    relay.tick()
    assert prompts(home) == ["twice"]


def test_a_hook_applying_its_own_event_holds_it_and_a_later_hook_delivers(
    relay: LocalRelay, home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    relay.close()  # no relay: hooks apply their events themselves
    os.chmod(home / "colony.db", 0o444)
    with monkeypatch.context() as patch:
        if os.access(home / "colony.db", os.W_OK):
            # root writes any file: make SQLite itself refuse, as a read-only mount would
            patch.setattr("colony_tasks.relay.apply.open_local", lambda **kw: _read_only_store())
        assert apply_here(record("user-prompt-submit", repo, prompt="held hook")) == {}
        assert prompts(home) == [] and held.waiting()
    os.chmod(home / "colony.db", 0o600)
    apply_here(record("user-prompt-submit", repo, prompt="next"))
    assert prompts(home) == ["held hook", "next"]


def _read_only_store():
    from colony_tasks.store import open_local

    store = open_local()
    store.conn.execute("PRAGMA query_only = 1")
    return store


def test_when_nothing_can_hold_it_the_log_says_the_event_is_lost(
    home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(held, "places", lambda: [str(home / "no" / "such" / "dir" / "h.db")])
    assert not held.hold(record("user-prompt-submit", repo, prompt="x"), "the disk is full")
    log = (home / "hooks.log").read_text()
    assert "lost: the disk is full; nowhere to hold it" in log


def test_only_storage_failures_are_held():
    full = sqlite3.connect(":memory:")
    full.execute("CREATE TABLE t (v)")
    full.execute("PRAGMA query_only = 1")
    with pytest.raises(sqlite3.Error) as read_only:
        full.execute("INSERT INTO t VALUES (1)")
    assert storage_failure(read_only.value) is not None
    with pytest.raises(sqlite3.Error) as bad_sql:
        full.execute("SELECT * FROM no_such_table")
    assert storage_failure(bad_sql.value) is None
    assert storage_failure(OSError(28, "No space left on device")) == (
        "the disk is full (No space left on device)"
    )
    assert storage_failure(ValueError("a bug")) is None
