"""Attacks on the MCP server's idea of its caller: an agent starts its own ``colony-tasks mcp``
with another live session's id in ``CLAUDE_CODE_SESSION_ID`` (ids are printed by
``colony-tasks sessions --json``). The server is a real stdio subprocess; the victim is a real
agent process (a stand-in) that is none of the server's ancestors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from colony_tasks.domain import delivery, sessions
from colony_tasks.store import Store, open_local
from colony_tasks.usecases import actions
from tests.support.helpers import snapshot
from tests.support.hookrun import EXE, relay_status
from tests.support.standin import StandIn


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def victim(home: Path, repo: Path) -> Iterator[StandIn]:
    agent = StandIn(home, repo, "victim")
    relay_status(home)
    yield agent
    agent.stop()


def unchanged(rows: dict[str, list]) -> dict[str, list]:
    """The tables a session's acts write (the server indexes import graphs as it starts)."""
    return {name: found for name, found in rows.items() if not name.startswith("dep_")}


async def calls(home: Path, repo: Path, env_session: str, tmp_path: Path, *tools: Any) -> list:
    """Call ``tools`` ((name, args) pairs) on a server whose environment names
    ``env_session``; each call's (is_error, text)."""
    env = {"COLONY_TASKS_HOME": str(home), "CLAUDE_CODE_SESSION_ID": env_session}
    params = StdioServerParameters(command=str(EXE), args=["mcp"], env=env, cwd=str(repo))
    found = []
    with (tmp_path / "server.err").open("w") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            for name, args in tools:
                result = await client.call_tool(name, args)
                found.append((result.is_error, result.content[0].text))
    return found


@pytest.mark.anyio
async def test_a_server_whose_environment_names_another_live_session_does_not_act_as_it(
    home: Path, repo: Path, tmp_path: Path, victim: StandIn
):
    store: Store = open_local()
    try:
        me = store.get_session(victim.sid)
        assert me is not None and me.agent_pid == victim.pid
        asker = sessions.register(store, "asker", agent="codex", cwd=str(repo)).session
        asked = actions.ask(store, asker, "Which port?", to=me.handle)
        actions.claim(store, me, ["src/mine.py"])
        before = snapshot(store)
        results = await calls(
            home,
            repo,
            victim.sid,
            tmp_path,
            ("task_post", {"content": "posted as the victim"}),
            ("answer_question", {"question_id": asked.id, "answer": "port 1"}),
            ("release_file", {}),
        )
        assert [failed for failed, _ in results] == [True, True, True], results
        assert all("Cannot tell which colony-tasks session" in text for _, text in results)
        assert unchanged(snapshot(store)) == unchanged(before)
        assert [o.id for o in delivery.pending_for(store, me)] == [asked.id]
    finally:
        store.close()
