"""Team mode over a slow network: what the store answers after a hook has left reaches the
session's next hook, once, never lost (issue 35).

The store is made far away by a delay proxy in front of the test server
(tests/support/delayproxy.py): applying a PreToolUse then takes seconds, far past what its
hook waits, while the hooks themselves run as real subprocesses through the product's relay.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support.delayproxy import DelayProxy
from tests.support.hookrun import claude
from tests.support.teamutil import Machine, context, make_machines, spool, wait_for

pytestmark = pytest.mark.postgres

#: The lead-in of a late reply (spelled out: this test also runs against code without it).
ARRIVED_LATE = "colony-tasks (arrived after your last action):"
WARNING = "search.py L1 meets"
#: One way: a 200 ms round trip, so a PreToolUse's round trips take seconds to apply.
FAR = 0.1


@pytest.fixture
def proxy(pg_url: str) -> Iterator[DelayProxy]:
    made = DelayProxy(urlsplit(pg_url).port or 5432, 0.0)
    made.start()
    yield made
    made.stop()


@pytest.fixture
def machines(tmp_path: Path, pg_url: str, proxy: DelayProxy) -> Iterator[list[Machine]]:
    port = urlsplit(pg_url).port
    found = make_machines(tmp_path, pg_url.replace(f":{port}/", f":{proxy.port}/"))
    yield found
    for machine in found:
        machine.stop_relay()


def pending(machine: Machine) -> int:
    conn = sqlite3.connect(machine.outbox())
    try:
        return int(conn.execute("SELECT count(*) FROM outbox").fetchone()[0])
    finally:
        conn.close()


def prompt(machine: Machine, sid: str, text: str) -> str:
    payload = claude("user-prompt-submit", sid, machine.clone, prompt=text)
    return context(machine.hook("user-prompt-submit", payload))


def test_a_warning_applied_after_its_hook_left_is_shown_once_at_the_session_s_next_hook(
    machines: list[Machine], proxy: DelayProxy
):
    laptop, runner = machines
    for machine, sid in ((laptop, "alice"), (runner, "bob"), (runner, "bob-2")):
        started = machine.hook("session-start", claude("session-start", sid, machine.clone))
        assert started.returncode == 0
    post = claude("post-tool-use", "alice", laptop.clone, tool_name="Write")
    post["tool_input"] = {"file_path": str(laptop.clone / "search.py"), "content": "x = 1\n"}
    assert laptop.hook("post-tool-use", post).returncode == 0

    proxy.delay = FAR
    pre = claude("pre-tool-use", "bob", runner.clone, tool_name="Write")
    pre["tool_input"] = {"file_path": str(runner.clone / "search.py"), "content": "y = 2\n"}
    left = runner.hook("pre-tool-use", pre)
    assert left.returncode == 0 and WARNING not in context(left)  # it did not wait for it
    wait_for(lambda: pending(runner) == 0, timeout=60)  # applied since, warning rendered
    proxy.delay = 0.0
    runner.stop_relay()  # restarted between the late reply and the session's next hook

    assert WARNING not in prompt(runner, "bob-2", "another session of the machine")
    shown = prompt(runner, "bob", "next prompt")
    assert shown.count(ARRIVED_LATE) == 1
    assert WARNING in shown.split(ARRIVED_LATE, 1)[1] and "alice@laptop" in shown
    again = prompt(runner, "bob", "the prompt after")
    assert ARRIVED_LATE not in again and WARNING not in again


def applied(relay, event: str, sessions: list[str], repo: Path, **fields: str) -> list[dict]:
    """Every session's ``event`` spooled, applied by ``relay``, its reply asked for in time."""
    for sid in sessions:
        spool(relay.outbox, f"{event}-{sid}", event, "claude", claude(event, sid, repo, **fields))
    spooled = [r["id"] for r in relay.outbox.pending()]
    relay.flush()
    return [relay.reply_for(i, event, sid) for i, sid in zip(spooled, sessions, strict=True)]


def closed(relay) -> None:
    if relay.store is not None:
        relay.store.close()
    relay.outbox.close()


@pytest.mark.parametrize("rows", [1, 3], ids=["one-row", "batch"])
def test_replies_collected_in_time_are_never_shown_again(
    pg_url: str, home: Path, repo: Path, rows: int
):
    """One spooled row is applied alone (``_apply``), several in one batch (``_apply_batch``);
    the next relay (which shows what its predecessor kept but never handed over) shows none."""
    from colony_tasks.relay.team import TeamRelay

    sessions = [f"s{n}" for n in range(rows)]
    relay = TeamRelay(pg_url)
    try:
        started = applied(relay, "session-start", sessions, repo)
        assert all(r.get("context") for r in started)  # each had something to show, in time
    finally:
        closed(relay)
    relay = TeamRelay(pg_url)
    try:
        prompted = applied(relay, "user-prompt-submit", sessions, repo, prompt="next")
        assert not any(ARRIVED_LATE in str(r) for r in prompted)
    finally:
        closed(relay)
