"""Benchmark of ``colony-tasks mcp`` through the real stdio transport: figures, not tests.

Measures, reporting p50 and p90 side by side (the machine may be shared and noisy):

1. spawn to ``initialize`` answered: the SDK's stdio client starts the console script and
   completes the handshake, N times (against a bare Python process that imports
   ``mcp.server.mcpserver`` and exits: the floor every server built on the SDK pays);
2. tool call round trips in one live session, the tools interleaved round-robin so noise hits
   them alike: ``task_timeline``, ``task_updates_since`` (one new message before every call),
   ``claim_file`` (renewing a claim another session also holds) and ``search``. Calls pass no
   ``session_id``: the caller is resolved from the process tree on every call, as for an agent.

Run ``python bench/mcp.py`` (``--quick`` for fewer samples, ``--json PATH`` to keep results).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _stats import (  # bench/ is on sys.path: it is this script's folder
    Stat,
    Timer,
    compare,
    format_table,
    log,
    machine_info,
    machine_line,
    stat,
    write_json,
)

# This file is named mcp.py: take its folder off sys.path so `import mcp` finds the SDK.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or os.curdir).resolve() != HERE]

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from colony_tasks.domain import sessions  # noqa: E402
from colony_tasks.store import Store  # noqa: E402
from colony_tasks.usecases import actions  # noqa: E402

EXE = Path(sys.executable).parent / "colony-tasks"
IMPORT_FLOOR = "import os, mcp.server.mcpserver; os._exit(0)"  # no teardown, like a live server
TOOLS = ("task_timeline", "task_updates_since", "claim_file", "search")
WORDS = "retry budget cache schema token queue worker migration index handler route parser".split()


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (
        ["init", "-q", "-b", "main"],
        ["-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "--allow-empty", "-m", "0"],
    ):
        subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    return path


def seed(home: Path, messages: int) -> tuple[Store, str]:
    """A lane with this process as one agent and another session that has posted ``messages``."""
    store = Store(home / "colony.db")
    repo = make_repo(home / "repo")
    sessions.register(store, "bench-me", agent="claude", cwd=str(repo), agent_pid=os.getpid())
    other = sessions.register(store, "bench-other", agent="codex", cwd=str(repo)).session
    actions.claim(store, other, ["src/app.py"])
    for i in range(messages):
        words = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(6))
        actions.post(store, other, f"message {i}: {words}")
    return store, other.id


def params(home: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(EXE), args=["mcp"], env={"COLONY_TASKS_HOME": str(home)}, cwd=str(home)
    )


async def spawn_times(home: Path, n: int) -> list[float]:
    samples = []
    with open(os.devnull, "w") as errlog:
        for _ in range(n):
            start = time.perf_counter()
            async with (
                stdio_client(params(home), errlog=errlog) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                samples.append(time.perf_counter() - start)
    return samples


def import_floor(n: int) -> list[float]:
    samples = []
    for _ in range(n):
        with Timer() as timer:
            subprocess.run([sys.executable, "-c", IMPORT_FLOOR], check=True, cwd=os.sep)
        samples.append(timer.seconds)
    return samples


async def call_times(home: Path, store: Store, other: str, n: int) -> dict[str, list[float]]:
    args: dict[str, dict[str, Any]] = {
        "task_timeline": {"limit": 30},
        "task_updates_since": {},
        "claim_file": {"paths": ["src/app.py"], "ttl_minutes": 30},
        "search": {"query": "retry budget", "limit": 10},
    }
    samples: dict[str, list[float]] = {name: [] for name in TOOLS}
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params(home), errlog=errlog) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            for name in TOOLS:  # warm-up
                await checked(client, name, args[name])
            while (await checked(client, "task_updates_since", {"limit": 200}))["remaining"]:
                pass  # drain the backlog: from here on every call gets one new item
            for i in range(n):
                shift = i % len(TOOLS)
                for name in TOOLS[shift:] + TOOLS[:shift]:
                    if name == "task_updates_since":
                        actions.post(store, other, f"news {i}")  # untimed: one new item
                    start = time.perf_counter()
                    await checked(client, name, args[name])
                    samples[name].append(time.perf_counter() - start)
    return samples


async def checked(client: ClientSession, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    if result.is_error:
        raise SystemExit(f"{name} failed: {result.content[0].text}")
    return result.structured_content


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--spawns", type=int, default=12, help="server starts to time (>= 10)")
    parser.add_argument("--calls", type=int, default=200, help="round trips per tool")
    parser.add_argument("--messages", type=int, default=2000, help="thread size before calls")
    parser.add_argument("--quick", action="store_true", help="10 spawns, 50 calls per tool")
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    opts = parser.parse_args()
    spawns, calls = (10, 50) if opts.quick else (max(10, opts.spawns), opts.calls)

    info = machine_info()
    log(machine_line(info))
    with tempfile.TemporaryDirectory(prefix="colony-bench-mcp-") as tmp:
        home = Path(tmp)
        store, other = seed(home, opts.messages)
        floor = stat("python: import mcp.server.mcpserver", import_floor(spawns))
        startup = compare(
            stat("spawn -> initialize answered", anyio.run(spawn_times, home, spawns)),
            floor,
            "import",
        )
        per_tool = anyio.run(call_times, home, store, other, calls)
        store.close()

    stats: list[Stat] = [startup, floor]
    stats += [stat(f"call {name}", per_tool[name]) for name in TOOLS]
    stats.append(stat("call (all tools)", [s for name in TOOLS for s in per_tool[name]]))
    print(format_table(stats, title=f"colony-tasks mcp over stdio ({opts.messages} messages)"))
    if opts.json:
        write_json(opts.json, {"machine": info, "stats": stats})


if __name__ == "__main__":
    main()
