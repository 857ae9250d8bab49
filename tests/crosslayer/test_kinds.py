"""One vocabulary for statuses and kinds: the store refuses others, every front end filters
with it, and a closed chain is listed as done through the CLI, the MCP server and the viewer."""

from __future__ import annotations

import enum
import json
import os
import sqlite3
import typing
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client
from starlette.testclient import TestClient

from colony_tasks.base.kinds import (
    POSTABLE_KINDS,
    TASK_STATUSES,
    AgentKind,
    DeliveryState,
    ItemStatus,
    ObsKind,
    TaskMode,
    TaskStatus,
    WorkState,
)
from colony_tasks.cli import cli
from colony_tasks.domain import sessions
from colony_tasks.domain.tasks import STATUS_FILTERS
from colony_tasks.mcp_server import tools_read, tools_thread
from colony_tasks.mcp_server.server import build_server
from colony_tasks.store import Store, open_default
from colony_tasks.store.schema import MIGRATIONS
from colony_tasks.usecases import actions
from colony_tasks.viewer import create_app

TOKEN = "kinds-token-0123456789"


@pytest.fixture
def closed_chain(home: Path, repo: Path) -> int:
    store = open_default()
    try:
        alice = sessions.human_session(store, "alice", str(repo))
        # recorded under the in-memory MCP server's nearest ancestor: the caller it detects
        sessions.register(store, "sess-a", agent="claude", cwd=str(repo), agent_pid=os.getppid())
        chain = actions.chain_create(store, alice, "Pick a cache policy")
        actions.chain_close(store, alice, chain.chain_id)
        return chain.chain_id
    finally:
        store.close()


def test_closing_a_chain_sets_the_status_every_filter_uses(closed_chain: int):
    store = open_default()
    try:
        assert store.get_task(closed_chain).status == TaskStatus.DONE
        done = [t["id"] for t in actions.task_list(store, status=TaskStatus.DONE)]
        still_open = [t["id"] for t in actions.task_list(store, status=TaskStatus.OPEN)]
    finally:
        store.close()
    assert closed_chain in done and closed_chain not in still_open


def test_the_cli_lists_a_closed_chain_as_done(closed_chain: int):
    result = CliRunner().invoke(cli, ["tasks", "--status", "done", "--json"])
    assert result.exit_code == 0, result.output
    assert "Pick a cache policy" in result.output and '"done"' in result.output
    open_only = CliRunner().invoke(cli, ["tasks", "--json"])
    assert "Pick a cache policy" not in open_only.output


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_mcp_server_lists_a_closed_chain_as_done(closed_chain: int, anyio_backend):
    async with Client(build_server(background=False), mode="legacy") as client:
        done = await client.call_tool("task_list", {"status": "done", "session_id": "sess-a"})
        opened = await client.call_tool("task_list", {"status": "open", "session_id": "sess-a"})
    assert [t["id"] for t in done.structured_content["tasks"]] == [closed_chain]
    assert done.structured_content["tasks"][0]["status"] == "done"
    assert closed_chain not in [t["id"] for t in opened.structured_content["tasks"]]


def test_the_viewer_lists_a_closed_chain_as_done(closed_chain: int, repo: Path):
    store = open_default()
    try:
        app = create_app(store, TOKEN, human_name="alice", cwd=str(repo))
        with TestClient(app, base_url=f"http://testserver/{TOKEN}/") as client:
            done = client.get("/api/tasks?status=done").json()
            opened = client.get("/api/tasks").json()
            bad = client.get("/api/tasks?status=completed")
    finally:
        store.close()
    assert [c["id"] for c in done["chains"]] == [closed_chain]
    assert done["chains"][0]["status"] == "done"
    assert closed_chain not in [c["id"] for c in opened["chains"]]
    assert bad.status_code == 400 and "Unknown task status" in bad.json()["error"]


def test_front_end_literals_match_the_core_vocabulary():
    hints = typing.get_type_hints(tools_read.task_list, include_extras=True)
    assert set(typing.get_args(hints["status"])) == set(STATUS_FILTERS)
    kinds = typing.get_type_hints(tools_thread.task_post, include_extras=True)["kind"]
    assert set(typing.get_args(kinds)) == {k.value for k in POSTABLE_KINDS}
    assert set(STATUS_FILTERS) == {*TASK_STATUSES, "all"}


def test_the_store_refuses_a_status_or_mode_outside_the_vocabulary(store: Store):
    task_id = store.insert_task("t")
    with pytest.raises(sqlite3.IntegrityError, match="task status must be open or done"):
        store.conn.execute("UPDATE tasks SET status = 'completed' WHERE id = ?", (task_id,))
    with pytest.raises(sqlite3.IntegrityError):
        store.conn.execute(
            "INSERT INTO tasks(title, mode, status, created_at) VALUES ('x', 'lane', 'closed', 1)"
        )
    assert store.get_task(task_id).status == "open"


def test_a_chain_closed_before_the_vocabulary_migration_reads_as_done(tmp_path: Path):
    path = tmp_path / "old.db"
    before = [m for m in MIGRATIONS if m.name != "task_vocabulary" and m.version < 7]
    old = Store(path, migrations=before)
    old.conn.execute(
        "INSERT INTO tasks(title, mode, status, created_at) VALUES ('old chain', 'chain',"
        " 'completed', 1)"
    )
    old.close()
    new = Store(path)
    try:
        (row,) = new.list_tasks(status="done")
    finally:
        new.close()
    assert row["title"] == "old chain" and row["status"] == "done"


VOCABULARIES = [AgentKind, TaskMode, TaskStatus, ObsKind, ItemStatus, WorkState, DeliveryState]


def test_a_member_has_the_name_and_value_the_type_checker_sees():
    assert TaskStatus.DONE.name == "DONE" and TaskStatus.DONE.value == "done"
    assert DeliveryState.REPORTED.name == "REPORTED"
    assert DeliveryState.REPORTED.value == "undeliverable-reported"
    for vocabulary in VOCABULARIES:
        assert all(isinstance(member, enum.Enum) for member in vocabulary)
        assert [m.name for m in vocabulary] == list(vocabulary.__members__)


def test_a_vocabulary_iterates_in_order_and_validates_by_value():
    assert list(TaskStatus) == [TaskStatus.OPEN, TaskStatus.DONE]
    assert TASK_STATUSES == ("open", "done")
    assert TaskStatus("done") is TaskStatus.DONE
    assert WorkState("done") is WorkState.DONE and WorkState.DONE is not TaskStatus.DONE
    with pytest.raises(ValueError, match="'completed' is not a valid TaskStatus"):
        TaskStatus("completed")


def test_members_are_plain_strings_to_json_sqlite_and_comparisons():
    assert ObsKind.NOTE == "note" and f"{ObsKind.NOTE}" == "note" and str(ObsKind.NOTE) == "note"
    assert {"note": 1}[ObsKind.NOTE] == 1
    encoded = json.dumps({"kind": ObsKind.NOTE, ItemStatus.PENDING: [WorkState.TAKEN]})
    assert encoded == '{"kind": "note", "pending": ["taken"]}'
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t(status TEXT)")
    db.execute("INSERT INTO t VALUES (?)", (TaskStatus.DONE,))
    (stored,) = db.execute("SELECT status FROM t WHERE status = ?", ("done",)).fetchone()
    assert stored == "done" and type(stored) is str
    assert TaskStatus(stored) is TaskStatus.DONE
