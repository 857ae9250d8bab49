"""Fewer round trips to the team store, every guarantee kept (real PostgreSQL server).

Rows spooled together are applied in one transaction (:func:`colony_tasks.relay.apply.apply_batch`):
whole or not at all, each event once, in order, and an event the core refuses does not take its
neighbours down. Statements are prepared once per connection (:class:`colony_tasks.store.pg.Connection`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from colony_tasks.relay import apply as apply_mod
from colony_tasks.relay.team import TeamRelay
from colony_tasks.store import open_store
from colony_tasks.store.pg import PgStore
from tests.support.hookrun import claude
from tests.support.teamutil import Machine, make_machines, spool, wait_for

pytestmark = pytest.mark.postgres


@pytest.fixture
def laptop(tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch):
    machine = make_machines(tmp_path, pg_url)[0]
    monkeypatch.setenv("COLONY_TASKS_HOME", str(machine.home))
    for name, value in machine.env.items():
        monkeypatch.setenv(name, value)
    return machine


@pytest.fixture
def relay(laptop: Machine, pg_url: str):
    found = TeamRelay(pg_url)
    yield found
    if found.store is not None:
        found.store.close()
    found.outbox.close()


def prompts(url: str) -> list[tuple[str, str, int]]:
    """Every recorded prompt: its session, its text and the transaction that wrote it."""
    store = open_store(url)
    try:
        rows = store._all(
            "SELECT session_id, text, xmin::text::bigint FROM observations"
            " WHERE kind = 'prompt' ORDER BY id"
        )
        return [(r[0], r[1], int(r[2])) for r in rows]
    finally:
        store.close()


def spool_session(relay: TeamRelay, laptop: Machine, sid: str) -> None:
    start = claude("session-start", sid, laptop.clone, source="startup")
    spool(relay.outbox, f"{sid}-start", "session-start", "claude", start, pid=os.getpid())


def spool_prompt(relay: TeamRelay, laptop: Machine, sid: str, text: str) -> dict[str, Any]:
    payload = claude("user-prompt-submit", sid, laptop.clone, prompt=text)
    return spool(
        relay.outbox, f"{sid}-{text}", "user-prompt-submit", "claude", payload, pid=os.getpid()
    )


def spool_edit(relay: TeamRelay, laptop: Machine, sid: str, n: int) -> dict[str, Any]:
    """An edit's PreToolUse: an event that writes no item into the lane's task."""
    tool_input = {"file_path": str(laptop.clone / f"f{n}.py"), "old_string": "", "new_string": "x"}
    payload = claude("pre-tool-use", sid, laptop.clone, tool_name="Edit", tool_input=tool_input)
    return spool(
        relay.outbox, f"{sid}-edit-{n}", "pre-tool-use", "claude", payload, pid=os.getpid()
    )


def test_events_spooled_together_are_applied_in_order_in_transactions_ending_with_an_item(
    relay: TeamRelay, laptop: Machine, pg_url: str
):
    """Spooled rows are applied in batches; a batch ends with its first event that writes into
    a task (locked until its commit: other machines' items wait for it)."""
    spool_session(relay, laptop, "s1")
    relay.flush()
    for i in range(3):
        spool_edit(relay, laptop, "s1", i)
    for i in range(3):
        spool_prompt(relay, laptop, "s1", f"p{i}")
    xact_before = _xact_count(pg_url)
    relay.flush()
    found = prompts(pg_url)
    assert [text for _, text, _ in found] == [f"p{i}" for i in range(3)]
    assert len({xid for _, _, xid in found}) == 3
    # the three edits and the first prompt in one transaction, then one per prompt
    assert _xact_count(pg_url) - xact_before == 3
    assert relay.outbox.counts()["pending"] == 0


def _xact_count(url: str) -> int:
    """Transactions that wrote an event's idempotency key (one per batch)."""
    store = open_store(url)
    try:
        rows = store._all("SELECT COUNT(DISTINCT xmin::text) FROM hook_events")
        return int(rows[0][0])
    finally:
        store.close()


def test_an_event_the_core_refuses_does_not_take_its_batch_neighbours_down(
    relay: TeamRelay, laptop: Machine, pg_url: str
):
    spool_session(relay, laptop, "s1")
    spool_prompt(relay, laptop, "s1", "before")
    # An agent's hook may not act as a human session: the core refuses it (NotAllowed).
    spool_prompt(relay, laptop, "human:bob", "posing as a human")
    spool_prompt(relay, laptop, "s1", "after")
    spool_prompt(relay, laptop, "s1", "after 2")
    relay.flush()
    assert [(sid, text) for sid, text, _ in prompts(pg_url)] == [
        ("s1", "before"),
        ("s1", "after"),
        ("s1", "after 2"),
    ]
    assert relay.outbox.counts() == {**relay.outbox.counts(), "pending": 0, "stuck": 0}
    store = open_store(pg_url)
    try:
        assert store.get_session("human:bob") is None
    finally:
        store.close()


def test_a_batch_cut_off_mid_way_applies_none_of_its_events_and_each_once_later(
    relay: TeamRelay, laptop: Machine, pg_url: str, monkeypatch: pytest.MonkeyPatch
):
    spool_session(relay, laptop, "s1")
    relay.flush()
    spooled = [spool_edit(relay, laptop, "s1", i) for i in range(3)]
    spooled += [spool_prompt(relay, laptop, "s1", f"p{i}") for i in range(2)]
    assert relay._connect() and relay.store is not None
    backend_pid = relay.store._one("SELECT pg_backend_pid()")[0]
    keys_before = _xact_count(pg_url)
    applied = apply_mod.apply
    calls: list[str] = []

    def dies_after_three(store: Any, request: dict[str, Any]) -> dict[str, Any]:
        # The relay's connection is cut (its process killed, the network gone) after three
        # events of the batch were applied in its open transaction.
        if len(calls) == 3:
            killer = open_store(pg_url)
            try:
                killer._one("SELECT pg_terminate_backend(?)", (backend_pid,))
            finally:
                killer.close()
        calls.append(request["event"])
        return applied(store, request)

    monkeypatch.setattr(apply_mod, "apply", dies_after_three)
    relay.flush()
    assert len(calls) == 4 and relay.down
    assert prompts(pg_url) == [] and relay.outbox.counts()["pending"] == 5
    assert _xact_count(pg_url) == keys_before  # the three edits' keys were rolled back too
    monkeypatch.setattr(apply_mod, "apply", applied)
    wait_for(lambda: relay.flush() or relay.outbox.counts()["pending"] == 0, timeout=30)
    assert [text for _, text, _ in prompts(pg_url)] == ["p0", "p1"]
    # The relay dies after committing, before forgetting the rows: applied again, they act
    # not once more (their idempotency keys were claimed in the batch's transaction).
    for i, request in enumerate(spooled):
        relay.outbox.put(f"again-{i}", request["event"], "claude", request, session_id="s1")
    relay.flush()
    assert [text for _, text, _ in prompts(pg_url)] == ["p0", "p1"]
    assert relay.outbox.counts()["pending"] == 0


def prepared_texts(store: PgStore, like: str) -> list[str]:
    rows = store._all(
        "SELECT statement FROM pg_prepared_statements WHERE statement LIKE ?", (like,)
    )
    return [r[0] for r in rows]


def test_a_statement_is_prepared_once_per_connection_however_often_it_runs(pg_url: str):
    store = open_store(pg_url)
    try:
        for _ in range(5):
            store._all("SELECT id FROM sessions WHERE id = ? AND 'once' = 'once'", ("nobody",))
        assert len(prepared_texts(store, "%'once' = 'once'%")) == 1
    finally:
        store.close()


def test_a_statement_prepared_before_its_table_changed_shape_runs_again(pg_url: str):
    store = open_store(pg_url)
    other = open_store(pg_url)
    try:
        store.conn.execute("CREATE TABLE shape (id INTEGER)")
        store._run("INSERT INTO shape(id) VALUES (?)", (1,))
        assert [dict(r) for r in store._all("SELECT * FROM shape WHERE id = ?", (1,))] == [
            {"id": 1}
        ]
        other.conn.execute("ALTER TABLE shape ADD COLUMN note TEXT DEFAULT 'new'")
        # Outside a transaction it is prepared anew at once.
        assert [dict(r) for r in store._all("SELECT * FROM shape WHERE id = ?", (1,))] == [
            {"id": 1, "note": "new"}
        ]
        other.conn.execute("ALTER TABLE shape ADD COLUMN more TEXT DEFAULT 'more'")
        # In a transaction, that transaction fails; the next one runs it prepared anew.
        with pytest.raises(Exception, match="cached plan"), store.transaction():
            store._all("SELECT * FROM shape WHERE id = ?", (1,))
        with store.transaction():
            rows = store._all("SELECT * FROM shape WHERE id = ?", (1,))
        assert [dict(r) for r in rows] == [{"id": 1, "note": "new", "more": "more"}]
    finally:
        other.conn.execute("DROP TABLE IF EXISTS shape")
        other.close()
        store.close()
