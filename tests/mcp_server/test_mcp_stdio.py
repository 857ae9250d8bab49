"""End to end: ``colony-tasks mcp`` spawned as a real stdio subprocess."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from colony_tasks.domain import sessions
from colony_tasks.mcp_server.server import TOOL_ORDER
from colony_tasks.store import Store
from colony_tasks.usecases import actions
from tests.agents import toolchain as toolchain_mod
from tests.support.hookrun import EXE, claude, run_hook

INSPECTOR_NODE = (22, 19)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def server_env(home: Path) -> dict[str, str]:
    """The stdio client passes only a safe subset of the environment: name the store."""
    return {"COLONY_TASKS_HOME": str(home)}


async def ok(client: ClientSession, name: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    assert not result.is_error, result.content[0].text
    return result.structured_content


@pytest.mark.anyio
async def test_the_server_acts_as_the_session_that_its_parent_process_started(
    home: Path, repo: Path, tmp_path: Path
):
    # The SessionStart hook runs as a child of this process, so it records our pid as agent_pid;
    # the server spawned below is our child too, so its nearest ancestor is that agent process.
    started = run_hook(
        "session-start",
        claude("session-start", "e2e-claude", repo, source="startup"),
        home,
        agent="claude",
    )
    assert started.returncode == 0, started.stderr
    store = Store(home / "colony.db")
    me = store.get_session("e2e-claude")
    assert me.agent_pid == os.getpid() and me.handle in started.stdout
    other = sessions.register(store, "e2e-codex", agent="codex", cwd=str(repo)).session

    params = StdioServerParameters(
        command=str(EXE), args=["mcp"], env=server_env(home), cwd=str(repo)
    )
    errlog = tmp_path / "server.err"
    with errlog.open("w") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write) as client,
        ):
            init = await client.initialize()
            listed = await client.list_tools()
            claimed = await ok(client, "claim_file", paths=["src/app.py"], note="refactor")
            asked = await ok(client, "ask_question", question="Done with db.py?", to="codex")
            # A session acts only as itself: naming the other session is refused.
            posing = await client.call_tool("task_updates_since", {"session_id": other.handle})
            answer = actions.answer(store, other, asked["id"], "Yes.")  # the other agent
            timeline = await ok(client, "task_timeline")
            hits = await ok(client, "search", query="db.py", kinds=["question"])
            bad = await client.call_tool("task_timeline", {"limit": 0})

    assert init.server_info.name == "colony-tasks" and init.instructions
    assert len(listed.tools) == len(TOOL_ORDER)
    assert claimed["holder"] == me.handle
    assert [(c["handle"], c["pattern"]) for c in store.list_claims()] == [(me.handle, "src/app.py")]
    assert asked["author"] == me.handle and asked["delivery"] == {other.handle: "pending"}
    assert posing.is_error and "acts only as itself" in posing.content[0].text
    assert answer.ok is True
    kinds = [(i["kind"], i["author"]) for i in timeline["items"]]
    assert kinds[-3:] == [
        ("claim", me.handle),
        ("question", me.handle),
        ("answer", other.handle),
    ]
    assert [h["id"] for h in hits["hits"]] == [asked["id"]]
    assert bad.is_error and "limit" in bad.content[0].text
    assert "Traceback" not in errlog.read_text()


def rpc(process: subprocess.Popen, message: dict[str, Any]) -> None:
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()


def initialize(process: subprocess.Popen) -> dict[str, Any]:
    rpc(
        process,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
    )
    reply = json.loads(process.stdout.readline())
    rpc(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return reply


def spawn(home: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [str(EXE), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": os.environ.get("PATH", ""), **server_env(home)},
    )


def test_the_raw_tools_list_line_is_under_14_kb_and_eof_ends_the_server_cleanly(home: Path):
    process = spawn(home)
    try:
        assert initialize(process)["result"]["serverInfo"]["name"] == "colony-tasks"
        rpc(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        line = process.stdout.readline()
        process.stdin.close()
        rest = process.stdout.read()
        code = process.wait(timeout=10)
    finally:
        process.kill()
    assert len(json.loads(line)["result"]["tools"]) == len(TOOL_ORDER)
    assert len(line.encode()) < 14_000
    assert rest == "" and code == 0
    assert process.stderr.read() == ""
    assert not (home / "colony.db-wal").exists()  # the lifespan closed the store


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_closes_the_store_and_ends_the_server_at_once(home: Path, signum: int):
    process = spawn(home)
    try:
        initialize(process)
        assert (home / "colony.db-wal").exists()  # the lifespan opened the store
        process.send_signal(signum)
        code = process.wait(timeout=5)
    finally:
        process.kill()
    assert code == 0 and process.stdout.read() == ""
    assert process.stderr.read() == ""
    assert not (home / "colony.db-wal").exists()  # the last connection closed cleanly


def node_version(path: str | None = None) -> tuple[int, ...] | None:
    node = shutil.which("node", path=path)
    if node is None:
        return None
    out = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    found = re.match(r"v(\d+)\.(\d+)\.(\d+)", out.strip())
    return tuple(int(n) for n in found.groups()) if found else None


def inspector_path() -> str:
    """A PATH whose node is new enough for the MCP Inspector: the system's, or else the Node 22
    the real-agents suite installs from the npm registry (tests/agents/versions.json)."""
    path = os.environ.get("PATH", "")
    version = node_version(path)
    if version is not None and version >= INSPECTOR_NODE:
        return path
    try:
        toolchain = toolchain_mod.install(toolchain_mod.pinned_versions())
    except toolchain_mod.Unavailable as missing:
        pytest.skip(
            f"The MCP Inspector needs Node >= 22.19 (this machine has {version}): {missing}"
        )
    return f"{toolchain.bin_dir}{os.pathsep}{path}"


@pytest.mark.slow
def test_the_mcp_inspector_cli_lists_and_calls_the_tools(home: Path, tmp_path: Path):
    path = inspector_path()
    assert node_version(path) >= INSPECTOR_NODE
    base = ["npx", "-y", "@modelcontextprotocol/inspector", "--cli"]
    server = ["-e", f"COLONY_TASKS_HOME={home}", str(EXE), "mcp"]
    env = {  # the Inspector keeps stdio env values under ~: keep them out of the real home
        **os.environ,
        "PATH": path,
        "HOME": str(tmp_path),
        "NPM_CONFIG_CACHE": os.environ.get("NPM_CONFIG_CACHE", str(Path.home() / ".npm")),
    }
    listed = subprocess.run(
        [*base, *server, "--method", "tools/list"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert listed.returncode == 0, listed.stderr
    names = {t["name"] for t in json.loads(listed.stdout)["tools"]}
    assert {"claim_file", "task_timeline", "search"} <= names
    called = subprocess.run(
        [*base, *server, "--method", "tools/call", "--tool-name", "task_list"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert called.returncode == 0, called.stderr
    assert "tasks" in json.loads(called.stdout)["structuredContent"]


@pytest.mark.anyio
async def test_the_server_binds_to_the_session_claude_code_names_in_its_environment(
    home: Path, repo: Path, tmp_path: Path
):
    # Two live sessions of this process, the server's parent (an agent after /clear): the
    # process tree finds the newer, the environment (as Claude Code starts its stdio MCP
    # servers) names the one the agent runs now.
    home.mkdir(parents=True, exist_ok=True)
    store = Store(home / "colony.db")
    me = sessions.register(
        store, "env-claude", agent="claude", cwd=str(repo), agent_pid=os.getpid()
    ).session
    sessions.register(store, "newer-claude", agent="claude", cwd=str(repo), agent_pid=os.getpid())
    env = {**server_env(home), "CLAUDE_CODE_SESSION_ID": "env-claude"}
    params = StdioServerParameters(command=str(EXE), args=["mcp"], env=env, cwd=str(repo))
    with (tmp_path / "server.err").open("w") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            posted = await ok(client, "task_post", content="bound from the environment")
    assert posted["author"] == me.handle
    store.close()
