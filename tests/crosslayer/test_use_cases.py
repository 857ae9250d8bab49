"""Every front end reaches the same core use case: the CLI, the MCP server and the viewer each
call one ``colony_tasks.usecases.actions`` function for an answer and for a chain turn, with the same
outcome. None routes, or looks up handles, itself. (The hooks' events: tests/usecases/test_events.py
for their outcomes, the import contract in pyproject.toml for who may call what.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client
from starlette.testclient import TestClient

from colony_tasks.base import procs
from colony_tasks.cli import cli
from colony_tasks.domain import sessions
from colony_tasks.mcp_server.server import build_server
from colony_tasks.store import open_default
from colony_tasks.usecases import actions
from colony_tasks.viewer import create_app

# One set of tests, two stores: SQLite and a real PostgreSQL server (tests/conftest.py).
pytestmark = pytest.mark.both_backends

TOKEN = "use-case-token-0123456789"


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch):
    """Records each call of the wrapped core functions, then runs the real function."""
    calls: list[tuple[str, dict[str, Any]]] = []

    def wrap(module, name: str) -> None:
        real = getattr(module, name)

        def recorded(*args: Any, **kwargs: Any) -> Any:
            calls.append((name, kwargs))
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, recorded)

    wrap(actions, "post")
    wrap(actions, "chain_pass")
    return calls


def human_cli(args: list[str]) -> Any:
    """The CLI as the human at a terminal: outside the agent's process tree (this test process
    is the in-memory MCP server's "agent", and a CLI inside an agent's tree acts as the agent)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(procs, "ancestry", lambda limit=64: [])
        return CliRunner().invoke(cli, args)


@pytest.fixture
def world(home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.chdir(repo)
    store = open_default()
    try:
        agent = sessions.register(  # under the in-memory MCP server's ancestor: the caller
            store, "sess-a", agent="claude", cwd=str(repo), agent_pid=os.getppid()
        ).session
        alice = sessions.human_session(store, "alice", str(repo))
        questions = [actions.ask(store, alice, f"question {i}?").id for i in range(3)]
        chain = actions.chain_create(store, alice, "review")
        return {
            "task_id": store.open_lane_task(agent.lane_id).id,
            "questions": questions,
            "chain_id": chain.chain_id,
            "agent": agent.handle,
            "repo": repo,
        }
    finally:
        store.close()


def answered(question_id: int) -> bool:
    store = open_default()
    try:
        return store.resolution(question_id)[0] == "answered"
    finally:
        store.close()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_answer_goes_through_actions_post_from_every_front_end(spy, world, anyio_backend):
    q_cli, q_mcp, q_viewer = world["questions"]
    result = human_cli(
        ["post", str(world["task_id"]), "yes", "--kind", "answer", "--reply-to", str(q_cli)],
    )
    assert result.exit_code == 0, result.output
    async with Client(build_server(background=False), mode="legacy") as client:
        reply = await client.call_tool(
            "task_post",
            {"content": "yes", "kind": "answer", "in_reply_to": q_mcp, "session_id": "sess-a"},
        )
    assert not reply.is_error, reply.content[0].text
    store = open_default()
    try:
        app = create_app(store, TOKEN, human_name="bob", cwd=str(world["repo"]))
        with TestClient(app, base_url=f"http://testserver/{TOKEN}/") as client:
            form = {"token": TOKEN, "text": "yes", "kind": "answer", "reply_to": str(q_viewer)}
            posted = client.post(f"/tasks/{world['task_id']}/post", data=form)
            assert posted.status_code == 200
    finally:
        store.close()
    routed = [kw for name, kw in spy if name == "post"]
    assert [kw["kind"] for kw in routed] == ["answer", "answer", "answer"]
    assert [kw["in_reply_to"] for kw in routed] == [q_cli, q_mcp, q_viewer]
    assert all(answered(q) for q in world["questions"])


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_chain_turn_goes_through_actions_chain_pass_from_every_front_end(
    spy, world, anyio_backend
):
    chain = str(world["chain_id"])
    result = human_cli(["chain", "pass", chain, world["agent"], "your turn", "--as", "alice"])
    assert result.exit_code == 0, result.output
    store = open_default()
    try:
        app = create_app(store, TOKEN, human_name="alice", cwd=str(world["repo"]))
        with TestClient(app, base_url=f"http://testserver/{TOKEN}/") as client:
            form = {"token": TOKEN, "to": world["agent"], "prompt": "again"}
            assert client.post(f"/tasks/{chain}/pass", data=form).status_code == 200
    finally:
        store.close()
    async with Client(build_server(background=False), mode="legacy") as client:
        refused = await client.call_tool(
            "chain_pass",
            {"chain_id": world["chain_id"], "to": "alice", "prompt": "x", "session_id": "sess-a"},
        )
    assert refused.is_error and "Only the coordinator" in refused.content[0].text
    assert [name for name, _ in spy] == ["chain_pass"] * 3
    store = open_default()
    try:
        turns = store.timeline(world["chain_id"], kinds=["turn"], limit=10)
    finally:
        store.close()
    passed = [(t.to, t.text) for t in turns if t.to]
    assert passed == [(world["agent"], "your turn"), (world["agent"], "again")]


def test_a_dependency_graph_is_saved_twice_on_either_backend(store):
    # `colony-tasks index` and the MCP index worker rewrite rows that exist (PostgreSQL has no
    # INSERT OR REPLACE)
    row = ("src/a.py", "python", 1, 10, "h1", None, "[]", "[]")
    edge = ("src/a.py", "src/b.py", '["f"]')
    common = {"root": "/r", "config_json": "{}", "skipped": {}}
    store.graph.save("/r/.git", files=[row], edges=[edge], **common)
    newer = ("src/a.py", "python", 2, 12, "h2", None, "[]", "[]")
    store.graph.save(
        "/r/.git", files=[newer], edges=[("src/a.py", "src/b.py", '["g"]')], paths=[], **common
    )
    files, edges = store.graph.rows("/r/.git")
    assert [f[4] for f in files] == ["h2"]
    assert [e[2] for e in edges] == ['["g"]']
