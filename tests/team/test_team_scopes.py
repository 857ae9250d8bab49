"""Lane locks on a team store: an event locks its folder's lane, not the store.

Events of different lanes (branches, repositories) are applied side by side; events of one
lane, and the MCP tools and the CLI (which lock the whole store), one at a time. A transaction
begun for some lanes that reaches another is rolled back and applied again under the whole
store's lock. Real PostgreSQL, real relays (:class:`colony_tasks.relay.team.TeamRelay`)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from colony_tasks.base import lanes
from colony_tasks.base.errors import OutOfScope, StoreBusy
from colony_tasks.base.redact import redact
from colony_tasks.store.pg import LANE_LOCK_CLASS, LOCK_KEY, lane_lock_key
from tests.support.gitutil import git, make_repo
from tests.support.hookrun import claude
from tests.support.teamutil import spool, wait_for
from tests.team.test_team_roles import (  # noqa: F401 (fixtures)
    Crew,
    TeamServer,
    crew,
    team_server,
)
from tests.team.test_team_stall import hold, laptop_relay  # noqa: F401 (fixtures)

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.postgres


def lane_of(path: Path) -> tuple[str, str]:
    found = lanes.resolve(str(path))
    return found.repo_id, found.branch


def lane_lock(path: Path) -> list[str]:
    """The statements that hold ``path``'s lane as an event's transaction does."""
    repo_id, branch = lane_of(path)
    key = lane_lock_key(redact(repo_id), redact(branch))
    return [
        f"SELECT pg_advisory_xact_lock_shared({LOCK_KEY})",
        f"SELECT pg_advisory_xact_lock({LANE_LOCK_CLASS}, {key})",
    ]


def prompts_of(crew: Crew, session: str) -> list[str]:  # noqa: F811
    rows = crew.alice._all(
        "SELECT text FROM observations WHERE session_id = ? AND kind = 'prompt' ORDER BY id",
        (session,),
    )
    return [r[0] for r in rows]


@pytest.mark.parametrize("where", ["another branch", "another repository"])
def test_a_member_holding_one_lane_does_not_hold_an_event_of_another(
    crew: Crew,  # noqa: F811
    hold: Callable[..., Any],  # noqa: F811
    laptop_relay: Any,  # noqa: F811
    repo: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    where: str,
):
    if where == "another branch":  # a linked worktree of the repository, on its own branch
        other = tmp_path / "side"
        git(repo, "worktree", "add", "-q", "-b", "side", str(other))
    else:
        other = make_repo(tmp_path / "other")
    assert lane_of(other) != lane_of(repo)
    relay = laptop_relay
    sid = f"elsewhere-{where.replace(' ', '-')}"
    payload = claude("user-prompt-submit", sid, other, prompt=f"on {where}")
    spool(relay.outbox, "row-1", "user-prompt-submit", "claude", payload)
    hold(crew.server.bob, *lane_lock(repo))
    with caplog.at_level("WARNING", logger="colony_tasks.store"):
        relay.flush()
    assert relay.outbox.counts()["pending"] == 0
    assert prompts_of(crew, sid) == [f"on {where}"]
    assert "write lock" not in caplog.text  # not waited for
    # (the server ends a holder idle for 4 s: each wait below has a fresh one)
    crew.alice.lock_patience = 0.5
    # the held lane's own events wait for the holder, and say who it is
    hold(crew.server.bob, *lane_lock(repo))
    held = frozenset({lane_of(repo)})
    with pytest.raises(StoreBusy, match="role bob_desktop"), crew.alice.transaction(held):
        pass
    # and so does a transaction of the whole store (an MCP tool's)
    hold(crew.server.bob, *lane_lock(repo))
    with pytest.raises(StoreBusy, match="role bob_desktop"), crew.alice.transaction():
        pass


def test_the_whole_store_s_lock_holds_every_lane(
    crew: Crew,  # noqa: F811
    hold: Callable[..., Any],  # noqa: F811
    tmp_path: Path,
):
    other = make_repo(tmp_path / "other")
    hold(crew.server.bob, f"SELECT pg_advisory_xact_lock({LOCK_KEY})")
    crew.alice.lock_patience = 0.5
    elsewhere = frozenset({lane_of(other)})
    with pytest.raises(StoreBusy, match="role bob_desktop"), crew.alice.transaction(elsewhere):
        pass


def test_a_lane_the_transaction_did_not_lock_rolls_it_back(
    crew: Crew,  # noqa: F811
    repo: Path,
):
    store = crew.alice
    theirs = lanes.resolve(str(repo))
    their_lane = store.upsert_lane(theirs.repo_id, theirs.root, theirs.repo_name, "main")
    mine = (theirs.repo_id, "side")  # another branch of the same repository
    with pytest.raises(OutOfScope), store.transaction(frozenset({mine})):
        store.upsert_lane(theirs.repo_id, theirs.root, theirs.repo_name, "side")
        store.get_lane(their_lane.id)
    assert store.find_lane(*mine) is None
    # caught inside, it still does not commit
    with pytest.raises(OutOfScope), store.transaction(frozenset({mine})):
        store.upsert_lane(theirs.repo_id, theirs.root, theirs.repo_name, "side")
        try:
            store.lane_and_task(their_lane.id)
        except OutOfScope:
            pass
    assert store.find_lane(*mine) is None
    with store.transaction(frozenset({mine})):
        store.upsert_lane(theirs.repo_id, theirs.root, theirs.repo_name, "side")
    assert store.find_lane(*mine) is not None


def test_an_event_whose_lane_is_of_another_repository_is_applied_under_the_whole_lock(
    crew: Crew,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
):
    from colony_tasks.hooks.payload import request
    from colony_tasks.relay import apply as apply_mod

    store = crew.alice
    begun: list[frozenset[tuple[str, str]] | None] = []
    real_begin = store._begin

    def recording(scope: frozenset[tuple[str, str]] | None = None) -> None:
        begun.append(scope)
        real_begin(scope)

    monkeypatch.setattr(store, "_begin", recording)

    def wire(event: str, payload: dict[str, Any]) -> dict[str, Any]:
        import json

        return request(event, "claude", payload, json.dumps(payload).encode()).to_wire()

    solo = make_repo(tmp_path / "solo")  # no origin: known by its git folder
    before = lane_of(solo)
    start = claude("session-start", "moved-1", solo, source="startup")
    apply_mod.apply_alone(store, wire("session-start", start))
    assert begun == [frozenset({before})]
    # an origin is added: the folder is now that repository, the session's lane the old one
    git(solo, "remote", "add", "origin", "https://example.com/org/solo.git")
    after = lane_of(solo)
    assert after != before
    begun.clear()
    prompt = claude("user-prompt-submit", "moved-1", solo, prompt="after the origin")
    apply_mod.apply_alone(store, wire("user-prompt-submit", prompt))
    assert begun == [frozenset({after}), None]  # missed, then the whole store's lock
    assert prompts_of(crew, "moved-1") == ["after the origin"]  # once
    from colony_tasks.base import paths

    logged = Path(paths.home(), paths.LOG_NAME).read_text()
    assert "applied again under the whole store's lock" in logged


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


def test_items_are_told_once_while_events_and_mcp_calls_of_one_session_race(
    crew: Crew,  # noqa: F811
    repo: Path,
):
    """A session's prompts (its relay: the lane's lock) and its MCP server's reads of
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
        scope = frozenset({lane_of(repo)})
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
                with relay_store.transaction(scope):
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
