"""A member cannot stall the team: a member's connection that holds the write lock or a row
lock and then hangs (a crashed client, a psql left in BEGIN) or runs a long statement is ended
by the server, and the other members' posts and relayed events wait for it and then go
through. The durations are recorded in the test's output (timing lives in benchmarks, not in
assertions): ``pytest -s``."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pg8000.dbapi import DatabaseError, InterfaceError

from colony_tasks.store.pg import LOCK_KEY, connect
from tests.support.hookrun import claude
from tests.support.pgserver import psql
from tests.support.teamutil import make_machines, spool, wait_for
from tests.team.test_team_roles import (  # noqa: F401 (fixtures)
    Crew,
    TeamServer,
    cli,
    crew,
    team_server,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = pytest.mark.postgres

TAKE_WRITE_LOCK = f"SELECT pg_advisory_xact_lock({LOCK_KEY})"


@pytest.fixture
def hold() -> Iterator[Callable[..., Any]]:
    """A member's connection that runs ``statements`` in a transaction and then sits idle;
    closed after the test whatever became of it."""
    made: list[tuple[str, int]] = []

    def holding(url: str, *statements: str) -> Any:
        holder = connect(url)
        cursor = holder.cursor()
        cursor.execute("SELECT pg_backend_pid()")
        made.append((url, cursor.fetchone()[0]))
        holder.autocommit = False
        for statement in statements:
            cursor.execute(statement)
        return holder

    yield holding
    for url, pid in made:  # a role may end its own server processes
        ender = connect(url)
        try:
            ender.cursor().execute("SELECT pg_terminate_backend(%s)", (pid,))
        finally:
            ender.close()


def was_ended(holder: Any) -> bool:
    """Whether the server ended ``holder``'s session (its next statement finds it gone)."""
    try:
        holder.cursor().execute("SELECT 1")
    except (DatabaseError, InterfaceError, OSError):
        return True
    finally:
        try:
            holder.close()
        except (DatabaseError, InterfaceError, OSError):
            pass
    return False


def flushed(relay: Any) -> None:
    """Flush ``relay`` as its worker does, again after each back-off, until its outbox is
    empty (at most 40 s: far beyond the server's limits, which end any holder within 20 s)."""
    wait_for(lambda: relay.flush() or relay.outbox.counts()["pending"] == 0, timeout=40)


def timed(label: str, work: Any) -> Any:
    start = time.monotonic()
    try:
        return work()
    finally:
        print(f"\n{label}: {time.monotonic() - start:.1f} s")


@pytest.fixture
def laptop_relay(crew: Crew, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:  # noqa: F811
    """Alice's machine's team relay (its own data folder), not started: a test flushes it."""
    from colony_tasks.relay.team import TeamRelay

    monkeypatch.setenv("COLONY_TASKS_HOME", str(tmp_path / "laptop"))
    relay = TeamRelay(crew.server.alice)
    try:
        yield relay
    finally:
        if relay.store is not None:
            relay.store.close()
        relay.outbox.close()


def test_a_member_idle_in_a_transaction_with_the_write_lock_is_ended_and_a_post_goes_through(
    crew: Crew,  # noqa: F811
    hold: Callable[..., Any],
):
    from colony_tasks.usecases import actions

    holder = hold(crew.server.bob, TAKE_WRITE_LOCK)
    waits: list[str] = []
    crew.alice.on_lock_wait = waits.append  # type: ignore[method-assign]
    posted = timed(
        "post behind an idle write-lock holder",
        lambda: actions.post(crew.alice, crew.a, "after bob's client hung"),
    )
    assert posted.id
    assert waits and "role bob_desktop" in waits[0]
    assert was_ended(holder)


def test_a_member_idle_with_the_write_lock_does_not_hold_another_machine_s_relay(
    crew: Crew,  # noqa: F811
    hold: Callable[..., Any],
    laptop_relay: Any,
    repo: Path,
):
    relay = laptop_relay
    payload = claude("user-prompt-submit", "relayed-1", repo, prompt="through the relay")
    spool(relay.outbox, "row-1", "user-prompt-submit", "claude", payload)
    holder = hold(crew.server.bob, TAKE_WRITE_LOCK)
    timed("relay flush behind an idle write-lock holder", relay.flush)
    assert relay.outbox.counts()["pending"] == 0
    prompts = crew.alice._all(
        "SELECT text FROM observations WHERE session_id = 'relayed-1' AND kind = 'prompt'"
    )
    assert [r[0] for r in prompts] == ["through the relay"]
    assert was_ended(holder)


def test_a_member_s_long_statement_under_the_write_lock_is_cancelled_and_a_post_goes_through(
    crew: Crew,  # noqa: F811
    hold: Callable[..., Any],
):
    from colony_tasks.usecases import actions

    holder = hold(crew.server.bob, TAKE_WRITE_LOCK)
    outcome: dict[str, BaseException | None] = {}

    def long_statement() -> None:
        try:
            holder.cursor().execute("SELECT pg_sleep(300)")
            outcome["error"] = None
        except (DatabaseError, InterfaceError, OSError) as error:
            outcome["error"] = error

    sleeper = threading.Thread(target=long_statement, daemon=True)
    sleeper.start()
    waits: list[str] = []
    crew.alice.on_lock_wait = waits.append  # type: ignore[method-assign]
    try:
        posted = timed(
            "post behind a long statement holding the write lock",
            lambda: actions.post(crew.alice, crew.a, "after bob's long statement"),
        )
        assert posted.id and waits and "role bob_desktop" in waits[0]
    finally:
        sleeper.join(timeout=1)
    assert outcome.get("error") is not None  # the long statement was cancelled
    assert was_ended(holder)  # and its aborted transaction, left idle, ended


def test_a_member_idle_with_a_row_lock_on_another_s_session_is_ended_and_its_update_goes_through(
    crew: Crew,  # noqa: F811
    hold: Callable[..., Any],
    repo: Path,
):
    from colony_tasks.domain import sessions

    holder = hold(crew.server.bob, f"SELECT id FROM sessions WHERE id = '{crew.a.id}' FOR UPDATE")
    seen = timed(
        "session update behind an idle row-lock holder",
        lambda: sessions.register(crew.alice, crew.a.id, agent="claude", cwd=str(repo)),
    )
    assert seen.session.id == crew.a.id
    assert was_ended(holder)


def test_a_member_idle_with_a_row_lock_on_another_s_session_is_ended_and_its_events_go_through(
    crew: Crew,  # noqa: F811
    hold: Callable[..., Any],
    laptop_relay: Any,
    repo: Path,
):
    relay = laptop_relay
    for n, text in enumerate(("before the lock", "after bob's row lock")):
        payload = claude("user-prompt-submit", "row-locked", repo, prompt=text)
        spool(relay.outbox, f"row-{n}", "user-prompt-submit", "claude", payload)
        if n == 0:
            relay.flush()  # the session exists; bob locks its row and hangs
            holder = hold(
                crew.server.bob, "SELECT id FROM sessions WHERE id = 'row-locked' FOR UPDATE"
            )
        else:
            # A statement waiting longer than the relay's read timeout looks like a server
            # away: the event stays spooled and is applied by a later flush.
            timed("relay applies behind an idle row-lock holder", lambda: flushed(relay))
    prompts = crew.alice._all(
        "SELECT text FROM observations WHERE session_id = 'row-locked' AND kind = 'prompt'"
        " ORDER BY id"
    )
    assert [r[0] for r in prompts] == ["before the lock", "after bob's row lock"]
    assert was_ended(holder)


def member_limits(url: str) -> tuple[str, str]:
    """The time limits a new connection of a member gets from the server (not from our
    client, which sets its own)."""
    member = connect(url)
    try:
        cursor = member.cursor()
        cursor.execute("SHOW idle_in_transaction_session_timeout")
        idle = cursor.fetchone()[0]
        cursor.execute("SHOW statement_timeout")
        return idle, cursor.fetchone()[0]
    finally:
        member.close()


def test_migrate_gives_an_existing_team_store_its_time_limits(
    team_server: TeamServer,  # noqa: F811
    tmp_path: Path,
):
    from colony_tasks.store import open_store

    open_store(team_server.admin).close()
    # A team store migrated before migration 19: no limits, the migration not recorded.
    reset = psql(team_server.server, "ALTER DATABASE colony_team RESET ALL;")
    assert reset.returncode == 0, reset.stderr
    admin = connect(team_server.admin)
    try:
        admin.cursor().execute("DELETE FROM schema_migrations WHERE version = 19")
    finally:
        admin.close()
    assert member_limits(team_server.bob) == ("0", "0")
    laptop = make_machines(tmp_path, team_server.admin, names=("laptop",))[0]
    run = cli(laptop, "migrate")
    assert run.returncode == 0, run.stderr
    assert member_limits(team_server.bob) == ("4s", "15s")
    store = open_store(team_server.admin, migrate=False)
    try:
        assert store.pending_migrations() == []
    finally:
        store.close()


def test_a_team_store_its_admin_does_not_own_migrates_and_keeps_the_server_s_limits(
    team_server: TeamServer,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
):
    from colony_tasks.store.pg import PgStore
    from colony_tasks.store.pg_schema import LATEST

    # The README's setup before migration 19: the database created by the server's
    # administrator, who owns it.
    made = psql(
        team_server.server,
        "CREATE DATABASE older_team;\n"
        "REVOKE ALL ON DATABASE older_team FROM PUBLIC;\n"
        "GRANT CONNECT ON DATABASE older_team TO colony_admin, colony_members;\n"
        "\\c older_team\n"
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC;\n"
        "GRANT CREATE ON SCHEMA public TO colony_admin;\n",
    )
    assert made.returncode == 0, made.stderr
    url = team_server.admin.replace("/colony_team?", "/older_team?")
    with caplog.at_level("WARNING", logger="colony_tasks.store"):
        store = PgStore(url)
    try:
        assert store.schema_version() == LATEST and store.pending_migrations() == []
    finally:
        store.close()
    assert "ALTER DATABASE older_team SET idle_in_transaction_session_timeout" in caplog.text
    assert member_limits(team_server.bob.replace("/colony_team?", "/older_team?")) == ("0", "0")
