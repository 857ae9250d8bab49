"""Benchmark of plans: figures and same-run ratios, not tests.

1. ``tools/list`` size (compact JSON bytes) with every tool, and without the three plan tools
   (the same server, same run), against the 14,000-byte budget;
2. ``take_work`` (the next ready item, its files claimed, the thread item posted) in a task
   whose plan holds 1,000 items (a third of them waiting on earlier ones), interleaved with
   ``claim_file`` of one path by another session as the baseline write; goal p50 <= 5 ms;
3. the SessionStart briefing of a task with a 10-item plan, in characters (budget 1,200).

Run ``python bench/work.py`` (``--quick`` for fewer samples). Results are also written to
``bench/results/work.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
from _stats import (
    compare,
    format_table,
    machine_info,
    machine_line,
    stat,
    time_interleaved,
    write_json,
)

# bench/ holds a script named mcp.py: take the folder off sys.path so `import mcp` is the SDK.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or os.curdir).resolve() != HERE]

from mcp import Client  # noqa: E402

from colony_tasks.domain import sessions  # noqa: E402
from colony_tasks.mcp_server.server import build_server  # noqa: E402
from colony_tasks.render import briefing  # noqa: E402
from colony_tasks.store import Store  # noqa: E402
from colony_tasks.usecases import actions  # noqa: E402

RESULTS = HERE / "results" / "work.json"
PLAN_TOOLS = {"plan_work", "take_work", "finish_work"}
BUDGET_BYTES = 14_000


def tools_list_bytes() -> tuple[int, int]:
    async def listed() -> tuple[int, int]:
        server = build_server(lambda: Store(":memory:"), background=False)
        async with Client(server) as client:
            tools = await client.list_tools()
        full = tools.model_dump(by_alias=True, exclude_none=True, mode="json")
        without = {**full, "tools": [t for t in full["tools"] if t["name"] not in PLAN_TOOLS]}
        size = len(json.dumps(full, separators=(",", ":")).encode())
        return size, len(json.dumps(without, separators=(",", ":")).encode())

    return anyio.run(listed)


def make_repo(root: Path) -> Path:
    repo = root / "proj"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(
            ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
            cwd=repo,
            check=True,
        )
    return repo


def take_work_samples(repo: Path, root: Path, n: int) -> dict[str, list[float]]:
    store = Store(root / "work.db")
    try:
        planner = sessions.register(store, "planner", agent="claude", cwd=str(repo)).session
        taker = sessions.register(store, "taker", agent="codex", cwd=str(repo)).session
        other = sessions.register(store, "other", agent="claude", cwd=str(repo)).session
        for start in range(0, 1000, 100):
            items: list[dict] = []
            for i in range(100):
                spec: dict = {"title": f"item {start + i}", "files": [f"src/m{start + i}/**"]}
                if i % 3 == 2:
                    spec["depends_on"] = [i - 1]
                items.append(spec)
            actions.plan_work(store, planner, items)
        counter = iter(range(10**6))
        return time_interleaved(
            {
                "take_work (next ready, 1,000 items)": lambda: actions.take_work(store, taker),
                "claim_file (one path, baseline)": lambda: actions.claim(
                    store, other, [f"docs/f{next(counter)}.md"]
                ),
            },
            n,
            warmup=5,
        )
    finally:
        store.close()


def briefing_chars(repo: Path, root: Path) -> int:
    store = Store(root / "brief.db")
    try:
        a = sessions.register(store, "a", agent="claude", cwd=str(repo)).session
        b = sessions.register(store, "b", agent="codex", cwd=str(repo)).session
        items = [
            {"title": f"part {n} of the storage migration", "files": [f"src/part{n}/**"]}
            for n in range(10)
        ]
        for n in range(5, 10):
            items[n]["depends_on"] = [n - 5]
        ids = actions.plan_work(store, a, items).ids
        actions.take_work(store, a, ids[0])
        actions.take_work(store, b, ids[1])
        text = briefing.briefing(
            store, sessions.register(store, "a", agent="claude", cwd=str(repo))
        )
        print("\n--- briefing with a 10-item plan ---\n" + text + "\n---")
        return len(text)
    finally:
        store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args()
    n = 60 if args.quick else 300
    info = machine_info()
    print(machine_line(info))
    size, without = tools_list_bytes()
    print(
        f"tools/list: {size} bytes compact JSON ({without} without the plan tools;"
        f" budget {BUDGET_BYTES})"
    )
    with tempfile.TemporaryDirectory(prefix="colony-bench-work-") as tmp:
        root = Path(tmp)
        repo = make_repo(root)
        samples = take_work_samples(repo, root, n)
        chars = briefing_chars(repo, root)
    names = list(samples)
    take = stat(names[0], samples[names[0]])
    base = stat(names[1], samples[names[1]])
    print(format_table([compare(take, base, "× claim_file"), base], title="take_work"))
    print(f"briefing with a 10-item plan: {chars} characters (budget 1,200)")
    write_json(
        RESULTS,
        {
            "machine": info,
            "tools_list_bytes": size,
            "tools_list_bytes_without_plan_tools": without,
            "take_work": take,
            "claim_file_baseline": base,
            "briefing_chars_10_item_plan": chars,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
