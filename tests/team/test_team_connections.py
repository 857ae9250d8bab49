"""Connection discipline: a machine's relay holds one connection to the team's server, used
by its worker, its searches and its wake waits alike. Real PostgreSQL, a real relay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from colony_tasks.store.pg import connect
from tests.support.hookrun import claude
from tests.support.teamutil import spool
from tests.team.test_team_roles import (  # noqa: F401 (fixtures)
    Crew,
    TeamServer,
    crew,
    team_server,
)
from tests.team.test_team_stall import laptop_relay  # noqa: F401 (fixture)

pytestmark = pytest.mark.postgres


def server_connections(url: str) -> int:
    """Connections of alice's role the server holds, the one asking excluded."""
    conn = connect(url)
    try:
        cursor = conn.cursor()
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = current_user"
            " AND pid <> pg_backend_pid()"
        )
        return int(cursor.fetchone()[0])
    finally:
        conn.close()


def test_a_relay_s_worker_searches_and_wake_waits_share_one_connection(
    crew: Crew,  # noqa: F811
    laptop_relay: Any,  # noqa: F811
    repo: Path,
):
    before = server_connections(crew.server.alice)
    relay = laptop_relay
    payload = claude("user-prompt-submit", "one-conn", repo, prompt="the quokkaparser is flaky")
    spool(relay.outbox, "row-1", "user-prompt-submit", "claude", payload)
    relay.flush()
    assert relay.outbox.counts()["pending"] == 0
    found = relay.search({"query": "quokkaparser", "semantic": False})
    assert [(h["kind"], "quokkaparser" in h["snippet"]) for h in found["hits"]] == [
        ("prompt", True)
    ]
    waits = relay.wake_store()
    assert waits is relay.store is relay.search_store()
    assert waits.get_session("one-conn") is not None
    assert server_connections(crew.server.alice) == before + 1
