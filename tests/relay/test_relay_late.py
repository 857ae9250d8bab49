"""Team mode: a reply its hook did not wait for is shown at the session's next hook, once.

The relay here never reaches a server (no worker runs): each test plays the worker's part by
answering spooled rows itself (``TeamRelay._answer``, as ``_apply`` and ``_apply_batch`` do)
and the hooks' part by asking for rows (``reply_for``). A hook that leaves asks with no wait.
tests/team/test_team_late.py runs the same against a real, slow PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from colony_tasks.relay.late import KEEP, LEAD_IN, TOO_LATE
from colony_tasks.relay.team import TeamRelay

NOWHERE = "postgresql://nobody@127.0.0.1:9/none"
AGENT, OTHER_AGENT = 4242, 4343
CHAIN = [9001, AGENT]


@pytest.fixture
def relay(home: Path) -> Iterator[TeamRelay]:
    made = TeamRelay(NOWHERE)
    yield made
    made.outbox.close()


def row(relay: TeamRelay, event: str, session: str, pid: int | None = AGENT) -> Any:
    """Spool one event as its hook does; the outbox row the worker reads."""
    row_id = relay.outbox.put(
        f"key-{event}-{session}-{relay.outbox.counts()['pending']}",
        event,
        "claude",
        {},
        session_id=session,
        agent_pid=pid,
    )
    return next(r for r in relay.outbox.pending() if r["id"] == row_id)


def left(relay: TeamRelay, event: str, session: str, reply: dict[str, Any]) -> dict[str, Any]:
    """A hook that leaves before its event is applied; then the worker applies it."""
    spooled = row(relay, event, session)
    gave_up = relay.reply_for(spooled["id"], event, session, CHAIN, wait=0)
    relay._answer(spooled, reply)
    relay.outbox.done(spooled["id"])
    return gave_up


def next_hook(
    relay: TeamRelay,
    session: str,
    own: str = "",
    *,
    chain: list[int] | None = CHAIN,
    event: str = "user-prompt-submit",
    deny: str = "",
) -> dict[str, Any]:
    """A hook of ``session`` whose event is applied in time with ``own`` as its text."""
    spooled = row(relay, event, session)
    relay._answer(spooled, {"context": own, "deny": deny})
    relay.outbox.done(spooled["id"])
    return relay.reply_for(spooled["id"], event, session, chain)


def late_rows(relay: TeamRelay) -> int:
    return relay.outbox.conn.execute("SELECT count(*) FROM late_replies").fetchone()[0]


def test_a_reply_its_hook_left_without_is_shown_once_at_the_session_s_next_hook_first(
    relay: TeamRelay,
):
    assert left(relay, "pre-tool-use", "s1", {"context": "core.py L3 meets bob's change"}) == {}
    shown = next_hook(relay, "s1", "your own delta")
    assert shown["context"] == f"{LEAD_IN}\ncore.py L3 meets bob's change\n\nyour own delta"
    assert next_hook(relay, "s1", "the next delta")["context"] == "the next delta"
    assert late_rows(relay) == 0


def test_a_late_reply_waits_for_a_hook_that_can_show_context(relay: TeamRelay):
    left(relay, "pre-tool-use", "s1", {"context": "a collision warning"})
    assert next_hook(relay, "s1", event="stop") == {"context": "", "deny": ""}
    assert next_hook(relay, "s1", event="notification") == {"context": "", "deny": ""}
    assert LEAD_IN in next_hook(relay, "s1", event="post-tool-use")["context"]


def test_a_late_reply_is_shown_when_the_next_hook_s_own_reply_is_late_too(relay: TeamRelay):
    left(relay, "pre-tool-use", "s1", {"context": "first warning"})
    spooled = row(relay, "post-tool-use", "s1")
    shown = relay.reply_for(spooled["id"], "post-tool-use", "s1", CHAIN, wait=0)
    assert shown == {"context": f"{LEAD_IN}\nfirst warning"}
    relay._answer(spooled, {"context": "second warning"})
    assert next_hook(relay, "s1")["context"] == f"{LEAD_IN}\nsecond warning"


def test_another_session_or_another_agent_s_client_does_not_get_a_late_reply(relay: TeamRelay):
    left(relay, "pre-tool-use", "s1", {"context": "for s1 only"})
    assert next_hook(relay, "s2", "s2's own")["context"] == "s2's own"
    stranger = next_hook(relay, "s1", "", chain=[9002, OTHER_AGENT])
    assert "for s1 only" not in str(stranger)
    assert next_hook(relay, "s1", "own")["context"] == f"{LEAD_IN}\nfor s1 only\n\nown"


def test_a_reply_collected_in_time_is_never_shown_again(relay: TeamRelay):
    first = next_hook(relay, "s1", "a warning in time")
    assert first["context"] == "a warning in time"
    assert next_hook(relay, "s1", "own")["context"] == "own"
    assert late_rows(relay) == 0


def test_a_quiet_event_s_reply_or_an_empty_one_is_not_kept(relay: TeamRelay):
    left(relay, "stop", "s1", {"context": "said to the human at stop"})
    left(relay, "pre-tool-use", "s1", {"context": "", "deny": ""})
    assert late_rows(relay) == 0
    assert next_hook(relay, "s1", "own")["context"] == "own"


def test_a_late_deny_is_said_as_context_and_does_not_deny_the_next_action(relay: TeamRelay):
    left(relay, "pre-tool-use", "s1", {"context": "", "deny": "chain: it is bob's turn"})
    shown = next_hook(relay, "s1", event="pre-tool-use")
    assert shown == {"context": f"{LEAD_IN}\n{TOO_LATE}chain: it is bob's turn", "deny": ""}


def test_a_hook_that_denies_leaves_late_replies_for_the_next_hook(relay: TeamRelay):
    left(relay, "pre-tool-use", "s1", {"context": "late warning"})
    denied = next_hook(relay, "s1", event="pre-tool-use", deny="not your turn")
    assert denied == {"context": "", "deny": "not your turn"}
    assert next_hook(relay, "s1")["context"] == f"{LEAD_IN}\nlate warning"


def test_a_session_keeps_its_newest_late_replies_and_says_how_many_were_dropped(
    relay: TeamRelay,
):
    spooled = [row(relay, "post-tool-use", "s1") for _ in range(KEEP + 2)]
    for each in spooled:  # every hook leaves before the store applies any of them
        assert relay.reply_for(each["id"], "post-tool-use", "s1", CHAIN, wait=0) == {}
    for i, each in enumerate(spooled):
        relay._answer(each, {"context": f"late {i}"})
        relay.outbox.done(each["id"])
    shown = next_hook(relay, "s1")["context"]
    assert [f"late {i}" in shown for i in range(KEEP + 2)] == [False, False] + [True] * KEEP
    assert shown.endswith("(2 earlier late replies were dropped.)")
    assert late_rows(relay) == 0
    assert LEAD_IN not in next_hook(relay, "s1", "own")["context"]


def test_a_session_that_ended_drops_its_late_replies(relay: TeamRelay):
    left(relay, "pre-tool-use", "s1", {"context": "never read"})
    ended = row(relay, "session-end", "s1")
    relay._answer(ended, {})
    assert late_rows(relay) == 0
    assert next_hook(relay, "s1", "resumed")["context"] == "resumed"


def test_a_reply_left_behind_survives_a_relay_restart(home: Path):
    first = TeamRelay(NOWHERE)
    spooled = row(first, "pre-tool-use", "s1")
    assert first.reply_for(spooled["id"], "pre-tool-use", "s1", CHAIN, wait=0) == {}
    first.outbox.close()  # stopped before it applied the row
    second = TeamRelay(NOWHERE)
    try:
        second._answer(spooled, {"context": "applied by the next relay"})
        shown = next_hook(second, "s1", "own")
        assert shown["context"] == f"{LEAD_IN}\napplied by the next relay\n\nown"
    finally:
        second.outbox.close()


def test_a_reply_applied_before_a_restart_reaches_its_hook_or_the_session_s_next(home: Path):
    first = TeamRelay(NOWHERE)
    asked, gone = row(first, "pre-tool-use", "s1"), row(first, "pre-tool-use", "s2")
    first._answer(asked, {"context": "for the hook that asks again"})
    first._answer(gone, {"context": "for a hook that is gone"})
    first.outbox.close()  # stopped before either hook collected its reply
    second = TeamRelay(NOWHERE)
    try:
        again = second.reply_for(asked["id"], "pre-tool-use", "s1", CHAIN, wait=0)
        assert again["context"] == "for the hook that asks again"
        assert next_hook(second, "s1", "own")["context"] == "own"
        assert next_hook(second, "s2", "own")["context"] == (
            f"{LEAD_IN}\nfor a hook that is gone\n\nown"
        )
    finally:
        second.outbox.close()


def test_an_outbox_of_the_version_before_late_replies_opens_with_its_rows_kept(home: Path):
    """A relay upgraded in place opens its machine's outbox as the last version left it
    (version 1: spooled rows and notices only): the rows still waiting are kept, and late
    replies can be kept in it from then on."""
    import sqlite3

    from colony_tasks.base import sqlite_file
    from colony_tasks.relay.outbox import SCHEMA_VERSION, outbox_path

    made = TeamRelay(NOWHERE)
    path = outbox_path(made.key)
    made.outbox.close()
    Path(path).unlink()
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE,"
        " event TEXT NOT NULL, agent TEXT, session_id TEXT NOT NULL DEFAULT '',"
        " agent_pid INTEGER, payload TEXT NOT NULL, created_at REAL NOT NULL,"
        " attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, stuck INTEGER NOT NULL DEFAULT 0);"
        " CREATE TABLE notices (session_id TEXT PRIMARY KEY, told_down_at REAL NOT NULL);"
        " INSERT INTO outbox(key, event, agent, session_id, agent_pid, payload, created_at)"
        " VALUES ('k1', 'user-prompt-submit', 'claude', 's1', 4242, '{}', 1.0);"
        " PRAGMA user_version = 1;"
    )
    old.close()
    upgraded = TeamRelay(NOWHERE)
    try:
        assert sqlite_file.version(upgraded.outbox.conn) == SCHEMA_VERSION
        assert [r["key"] for r in upgraded.outbox.pending()] == ["k1"]
        pending = upgraded.outbox.pending()[0]
        upgraded.late.left(pending["id"], "s1")  # its hook gave up, then the reply came
        upgraded._answer(pending, {"context": "what came late"})
        assert "what came late" in upgraded.late.take("s1", CHAIN)
    finally:
        upgraded.outbox.close()


@pytest.mark.parametrize(
    ("event", "in_time"), [("pre-tool-use", True), ("user-prompt-submit", False)]
)
def test_a_hook_before_a_tool_waits_longer_for_a_slow_event(
    relay: TeamRelay, monkeypatch: pytest.MonkeyPatch, event: str, in_time: bool
):
    """An event in flight longer than the slow limit ends a hook's wait (its reply comes
    late), except before a tool runs: a warning or a deny is worth most before the edit."""
    import threading
    import time

    from colony_tasks.relay import team

    monkeypatch.setattr(team, "SLOW_EVENT", 0.1)
    monkeypatch.setattr(team, "SLOW_BEFORE_TOOL", 3.0)
    relay.busy_limit = team.SLOW_EVENT
    spooled = row(relay, event, "s1")

    def worker() -> None:  # one event in flight for 0.6 s, then its reply
        relay.busy_since = time.monotonic()
        time.sleep(0.6)
        relay.busy_since = None
        relay._answer(spooled, {"context": "colony-tasks: that line meets alice's change"})

    applying = threading.Thread(target=worker)
    applying.start()
    try:
        reply = relay.reply_for(spooled["id"], event, "s1", CHAIN, wait=5.0)
    finally:
        applying.join()
    assert ("meets alice" in reply.get("context", "")) is in_time
    if not in_time:
        assert "meets alice" in next_hook(relay, "s1")["context"]
