"""Locks on a team store: an event waits only for the events that write the same task.

A relayed event's transaction takes the store's lock shared, and a task's lock from its first
item in that task to its commit (a lane's, to open its task); the MCP tools and the CLI take
the store's lock whole, and wait for every event in flight. Two machines' batches that cross
on two tasks are undone by the server in one of them, which runs again under the whole lock.
Real PostgreSQL, real relays (:class:`colony_tasks.relay.team.TeamRelay`), several connections
standing for several machines."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from colony_tasks.base import paths
from colony_tasks.base.errors import StoreBusy
from colony_tasks.store.pg import LOCK_KEY, TASK_LOCK_CLASS, PgStore
from tests.support.gitutil import git, make_repo
from tests.support.hookrun import claude
from tests.support.teamutil import spool, wait_for
from tests.team.test_team_roles import (  # noqa: F401 (fixtures)
    Crew,
    TeamServer,
    crew,
    team_server,
)
from tests.team.test_team_stall import flushed, hold, laptop_relay  # noqa: F401 (fixtures)

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.postgres


def wire(event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The request a hook client sends for ``payload``."""
    from colony_tasks.hooks.payload import request

    return request(event, "claude", payload, json.dumps(payload).encode()).to_wire()


def prompts_of(crew: Crew, session: str) -> list[str]:  # noqa: F811
    rows = crew.alice._all(
        "SELECT text FROM observations WHERE session_id = ? AND kind = 'prompt' ORDER BY id",
        (session,),
    )
    return [r[0] for r in rows]


def lane_task_of(store: Any, session: str) -> int:
    row = store._one(
        "SELECT t.id FROM sessions s JOIN tasks t ON t.lane_id = s.lane_id"
        " AND t.mode = 'lane' AND t.status = 'open' WHERE s.id = ?",
        (session,),
    )
    return int(row[0])


def alive(crew: Crew, pid: int) -> bool:  # noqa: F811
    return crew.alice._one("SELECT 1 FROM pg_stat_activity WHERE pid = ?", (pid,)) is not None


def side_branch(repo: Path, tmp_path: Path) -> Path:
    """A linked worktree of ``repo`` on its own branch: another lane of the repository."""
    other = tmp_path / "side"
    git(repo, "worktree", "add", "-q", "-b", "side", str(other))
    return other


@pytest.mark.parametrize("where", ["another branch", "another repository"])
def test_an_event_waits_only_for_the_events_writing_its_task(
    crew: Crew,  # noqa: F811
    hold: Callable[..., Any],  # noqa: F811
    laptop_relay: Any,  # noqa: F811
    repo: Path,
    tmp_path: Path,
    where: str,
):
    relay = laptop_relay
    here, there = (f"{name}-{where.replace(' ', '-')}" for name in ("here", "there"))
    other = side_branch(repo, tmp_path) if where == "another branch" else make_repo(tmp_path / "o")
    for sid, folder in ((here, repo), (there, other)):
        start = claude("session-start", sid, folder, source="startup")
        spool(relay.outbox, f"start-{sid}", "session-start", "claude", start)
    flushed(relay)
    task = lane_task_of(crew.alice, here)
    assert lane_task_of(crew.alice, there) != task
    # a member holds the task of the first session's lane, as an event does from its first item on
    holder = hold(
        crew.server.bob,
        f"SELECT pg_advisory_xact_lock_shared({LOCK_KEY})",
        f"SELECT pg_advisory_xact_lock({TASK_LOCK_CLASS}, {task})",
    )
    cursor = holder.cursor()
    cursor.execute("SELECT pg_backend_pid()")
    pid = cursor.fetchone()[0]
    elsewhere = claude("user-prompt-submit", there, other, prompt=f"on {where}")
    spool(relay.outbox, "p-there", "user-prompt-submit", "claude", elsewhere)
    edit = claude(
        "pre-tool-use", here, repo, tool_name="Edit",
        tool_input={"file_path": str(repo / "core.py"), "old_string": "a", "new_string": "b"},
    )  # fmt: skip
    spool(relay.outbox, "edit-here", "pre-tool-use", "claude", edit)
    relay.flush()
    assert relay.outbox.counts()["pending"] == 0
    assert prompts_of(crew, there) == [f"on {where}"]
    assert alive(crew, pid)  # applied while the task stayed held: neither waited for it
    # an item into the held task waits for it (the server ends the idle holder in 4 s)
    into = claude("user-prompt-submit", here, repo, prompt="into the held task")
    spool(relay.outbox, "p-here", "user-prompt-submit", "claude", into)
    flushed(relay)
    assert not alive(crew, pid)
    assert prompts_of(crew, here) == ["into the held task"]


def test_the_whole_store_s_lock_holds_every_event_and_an_event_holds_it(
    crew: Crew,  # noqa: F811
    hold: Callable[..., Any],  # noqa: F811
):
    crew.alice.lock_patience = 0.5
    hold(crew.server.bob, f"SELECT pg_advisory_xact_lock({LOCK_KEY})")  # an MCP tool's
    with pytest.raises(StoreBusy, match="role bob_desktop"), crew.alice.transaction(shared=True):
        pass
    # (the server ends a holder idle for 4 s: a fresh one)
    hold(crew.server.bob, f"SELECT pg_advisory_xact_lock_shared({LOCK_KEY})")  # an event's
    with crew.alice.transaction(shared=True):  # events run side by side
        pass
    with pytest.raises(StoreBusy, match="role bob_desktop"), crew.alice.transaction():
        pass


def test_two_machines_crossing_on_two_tasks_wait_for_one_undone(
    crew: Crew,  # noqa: F811
    repo: Path,
    tmp_path: Path,
):
    """Machine A's transaction locks main's task, then side's; B's side's, then main's, at
    the same moment: the server undoes one (:class:`Contended`), the other commits."""
    from colony_tasks.base.errors import Contended
    from colony_tasks.domain import sessions
    from colony_tasks.store import open_store

    side = side_branch(repo, tmp_path)
    a, b = open_store(crew.server.alice), open_store(crew.server.alice)
    try:
        tasks = [
            sessions.register(a, f"cross-{f.name}", agent="claude", cwd=str(f)).task.id
            for f in (repo, side)
        ]
        gate, outcome = threading.Barrier(2), {}

        def cross(name: str, store: PgStore, first: int, then: int) -> None:
            try:
                with store.transaction(shared=True):
                    store.lock_task(first)
                    gate.wait(timeout=10)
                    store.lock_task(then)
                outcome[name] = "committed"
            except Contended:
                outcome[name] = "undone"

        threads = [
            threading.Thread(target=cross, args=("a", a, *tasks)),
            threading.Thread(target=cross, args=("b", b, *reversed(tasks))),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert sorted(outcome.values()) == ["committed", "undone"]
    finally:
        a.close()
        b.close()


def test_an_event_whose_task_stays_locked_is_applied_again_under_the_whole_lock(
    crew: Crew,  # noqa: F811
    hold: Callable[..., Any],  # noqa: F811
    repo: Path,
):
    """A member's connection holds a task's lock past a statement's time (2 s here): the
    event is rolled back and applied once, under the whole store's lock, when the holder is
    gone (the server ends it idle after 4 s); logged."""
    from colony_tasks.relay import apply as apply_mod

    store = PgStore(crew.server.alice, statement_timeout_ms=2000, migrate=False)
    try:
        start = claude("session-start", "held-out", repo, source="startup")
        apply_mod.apply_alone(store, wire("session-start", start))
        task = lane_task_of(store, "held-out")
        hold(
            crew.server.bob,
            f"SELECT pg_advisory_xact_lock_shared({LOCK_KEY})",
            f"SELECT pg_advisory_xact_lock({TASK_LOCK_CLASS}, {task})",
        )
        prompt = claude("user-prompt-submit", "held-out", repo, prompt="past the holder")
        apply_mod.apply_alone(store, wire("user-prompt-submit", prompt))
        assert prompts_of(crew, "held-out") == ["past the holder"]
        logged = Path(paths.home(), paths.LOG_NAME).read_text()
        assert f"task {task} stayed locked by another event" in logged
        assert "applied again under the whole store's lock" in logged
    finally:
        store.close()


def test_a_batch_ends_with_its_first_item(
    crew: Crew,  # noqa: F811
    repo: Path,
):
    """Once an event of a batch has written into a task (locked to the commit), the batch
    starts no other: other machines' items into that task wait for one event, not a batch.
    Events before it, which write no item (an edit's PreToolUse), share its transaction."""
    from colony_tasks.relay import apply as apply_mod

    store = crew.alice
    start = claude("session-start", "batched", repo, source="startup")
    apply_mod.apply_alone(store, wire("session-start", start))
    edit = claude(
        "pre-tool-use", "batched", repo, tool_name="Edit",
        tool_input={"file_path": str(repo / "core.py"), "old_string": "a", "new_string": "b"},
    )  # fmt: skip
    prompts = [claude("user-prompt-submit", "batched", repo, prompt=f"p{i}") for i in range(3)]
    requests = [wire("pre-tool-use", edit)] + [wire("user-prompt-submit", p) for p in prompts]
    done = apply_mod.apply_batch(store, requests)
    assert len(done) == 2  # the PreToolUse and the first prompt
    assert prompts_of(crew, "batched") == ["p0"]
    assert len(apply_mod.apply_batch(store, requests[2:])) == 1
    assert prompts_of(crew, "batched") == ["p0", "p1"]


def two_relays(crew: Crew, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:  # noqa: F811
    from colony_tasks.relay.team import TeamRelay

    made = []
    for name in ("box-a", "box-b"):
        monkeypatch.setenv("COLONY_TASKS_HOME", str(tmp_path / name))
        made.append(TeamRelay(crew.server.alice))
    return made


def test_two_machines_opening_one_new_lane_at_once_make_one_task(
    crew: Crew,  # noqa: F811
    repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
):
    relays = two_relays(crew, tmp_path, monkeypatch)
    try:
        for round_ in range(6):
            branch = f"race-{round_}"
            git(repo, "checkout", "-q", "-b", branch)
            sids = [f"race-{round_}-{i}" for i in range(2)]
            for i, relay in enumerate(relays):
                for j in range(3):  # several rows: the second machine's batch races the first's
                    payload = claude("session-start", f"{sids[i]}-{j}", repo, source="startup")
                    spool(relay.outbox, f"r{round_}-{i}-{j}", "session-start", "claude", payload)
            gate = threading.Barrier(len(relays))

            def flush(relay: Any, gate: threading.Barrier = gate) -> None:
                gate.wait()
                wait_for(lambda: relay.flush() or relay.outbox.counts()["pending"] == 0)

            threads = [threading.Thread(target=flush, args=(r,)) for r in relays]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for relay in relays:  # each row applied, none failed on the way
                assert relay.outbox.counts()["pending"] == relay.outbox.counts()["stuck"] == 0
                assert relay.served == 3 * (round_ + 1)
            tasks = crew.alice._all(
                "SELECT t.id FROM tasks t JOIN lanes l ON l.id = t.lane_id"
                " WHERE l.branch = ? AND t.mode = 'lane' AND t.status = 'open'",
                (branch,),
            )
            assert len(tasks) == 1
            joined = crew.alice._all(
                "SELECT session_id FROM participants WHERE task_id = ?", (tasks[0][0],)
            )
            assert {r[0] for r in joined} == {f"{s}-{j}" for s in sids for j in range(3)}
    finally:
        for relay in relays:
            if relay.store is not None:
                relay.store.close()
            relay.outbox.close()


def test_an_event_opening_a_lane_s_task_waits_for_another_opening_it(
    crew: Crew,  # noqa: F811
    repo: Path,
):
    """Machine A's event opens a new lane's task and has not committed yet; machine B's
    event, opening it too, waits for A's commit and joins A's task (without the lane's
    lock it would insert a second one, and fail on the one-open-task index)."""
    from colony_tasks.base import lanes
    from colony_tasks.domain import sessions
    from colony_tasks.store import open_store

    found = lanes.resolve(str(repo))
    a, b = open_store(crew.server.alice), open_store(crew.server.alice)
    try:
        lane = a.upsert_lane(found.repo_id, found.root, found.repo_name, "opened-by-two")
        opened, made = threading.Event(), {}

        def first() -> None:
            try:
                with a.transaction(shared=True):
                    made["a"] = sessions.lane_task(a, lane, crew.a.id).id
                    opened.set()
                    time.sleep(0.5)
            finally:
                opened.set()

        thread = threading.Thread(target=first)
        thread.start()
        opened.wait(10)
        with b.transaction(shared=True):
            made["b"] = sessions.lane_task(b, lane, crew.a.id).id
        thread.join()
        assert made["a"] == made["b"]
    finally:
        a.close()
        b.close()


def test_items_are_told_once_while_events_and_mcp_calls_of_one_session_race(
    crew: Crew,  # noqa: F811
    repo: Path,
):
    """A session's prompts (its relay: shared transactions) and its MCP server's reads of
    what is new (the whole store's lock) race while another session posts to it: each item is
    given to it once, by one of them."""
    from colony_tasks.domain import sessions
    from colony_tasks.store import open_store
    from colony_tasks.usecases import actions, events
    from colony_tasks.usecases.events import Event

    relay_store, mcp_store = open_store(crew.server.alice), open_store(crew.server.alice)
    try:
        me = sessions.register(relay_store, "told-once", agent="claude", cwd=str(repo)).session
        actions.updates_since(mcp_store, me)  # told of what came before
        given: dict[str, list[int]] = {"relay": [], "mcp": []}
        calls = {"relay": 0, "mcp": 0}
        rounds, gate, posted = 25, threading.Barrier(3), threading.Event()

        def post() -> None:
            gate.wait()
            for i in range(rounds):
                actions.post(crew.alice, crew.a, f"note {i} for the racer")
            posted.set()

        def prompts() -> None:
            gate.wait()
            i = 0
            while not posted.is_set():
                with relay_store.transaction(shared=True):
                    done = events.prompt(relay_store, Event(me.id, "claude", str(repo)), f"p{i}")
                given["relay"] += [o.id for u in done.updates for o in u.items]
                i += 1
                calls["relay"] += 1

        def mcp() -> None:
            gate.wait()
            while not posted.is_set():
                given["mcp"] += [o.id for o in actions.updates_since(mcp_store, me).items]
                calls["mcp"] += 1

        threads = [threading.Thread(target=f) for f in (post, prompts, mcp)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        given["mcp"] += [o.id for o in actions.updates_since(mcp_store, me).items]
        notes = {
            int(r[0])
            for r in crew.alice._all(
                "SELECT id FROM observations WHERE text LIKE '% for the racer' AND session_id = ?",
                (crew.a.id,),
            )
        }
        told = [i for i in given["relay"] + given["mcp"] if i in notes]
        assert len(notes) == rounds
        assert sorted(told) == sorted(notes)  # every note once: none twice, none lost
        assert calls["relay"] > 3 and calls["mcp"] > 3  # both read while the notes came
    finally:
        relay_store.close()
        mcp_store.close()


def test_items_two_machines_write_into_one_task_are_each_told_once(
    crew: Crew,  # noqa: F811
    repo: Path,
):
    """Two machines' events write into one task while a third machine's events read what is
    new for their session (without writing): each item is told once, none skipped. A reader
    moves its cursor past the highest id it saw, so an item that commits after a higher one
    would be lost: the task's lock hands ids out in commit order (this test fails without
    it). Each writer keeps its transaction open a while after its item, as a network does,
    the two in turn the slower."""
    from colony_tasks.domain import sessions
    from colony_tasks.store import open_store
    from colony_tasks.usecases import actions

    stores = [open_store(crew.server.alice) for _ in range(3)]
    try:
        writers = [
            sessions.register(s, f"writer-{i}", agent="claude", cwd=str(repo)).session
            for i, s in enumerate(stores[:2])
        ]
        reader = sessions.register(stores[2], "reader", agent="claude", cwd=str(repo)).session
        actions.updates_since(stores[2], reader)  # told of what came before
        rounds, gate, done = 40, threading.Barrier(3), threading.Event()
        told: list[int] = []

        def write(store: PgStore, me: Any, index: int) -> None:
            gate.wait()
            for i in range(rounds):
                with store.transaction(shared=True):
                    actions.post(store, me, f"item {i} of {me.id}")
                    time.sleep(0.02 if i % 2 == index else 0.002)  # in turn the slower

        def read() -> None:
            gate.wait()
            while not done.is_set():
                with stores[2].transaction(shared=True):
                    told.extend(o.id for o in actions.updates_since(stores[2], reader).items)

        threads = [
            threading.Thread(target=write, args=(s, w, i))
            for i, (s, w) in enumerate(zip(stores[:2], writers, strict=True))
        ]
        threads.append(threading.Thread(target=read))
        for t in threads:
            t.start()
        for t in threads[:2]:
            t.join()
        done.set()
        threads[2].join()
        told.extend(o.id for o in actions.updates_since(stores[2], reader).items)
        items = {
            int(r[0])
            for r in crew.alice._all(
                "SELECT id FROM observations WHERE text LIKE 'item % of writer-%'"
            )
        }
        assert len(items) == 2 * rounds
        assert sorted(i for i in told if i in items) == sorted(items)
    finally:
        for store in stores:
            store.close()
