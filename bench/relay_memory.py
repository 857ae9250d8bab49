"""The relay's resident memory: idle, and its growth over many events (a leak shows here).

    python bench/relay_memory.py [--events 100000] [--every 10000]

Starts a relay on a fresh SQLite store and sends it hook requests directly over its socket
(the requests a hook client sends, built by the client's own code from realistic payloads:
prompts, edits, shell commands, sessions starting and ending), reading the relay's RSS from
its status every ``--every`` events. Prints RSS by event count and the events/s the relay
applied; results go to bench/results/relay_memory.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import _stats  # noqa: E402

from colony_tasks.hooks.payload import request  # noqa: E402
from colony_tasks.relay import wire  # noqa: E402
from hooks import git_repo  # noqa: E402

SESSIONS = 8


def payload_for(i: int, repo: Path) -> tuple[str, dict]:
    sid = f"mem-{i % SESSIONS}"
    base = {"session_id": sid, "cwd": str(repo), "transcript_path": f"/h/.claude/{sid}.jsonl"}
    kind = i % 4
    if kind == 0:
        return "user-prompt-submit", {**base, "prompt": f"step {i}: fix it", "prompt_id": f"p{i}"}
    if kind == 1:
        tool = {"tool_name": "Edit", "tool_input": {"file_path": f"{repo}/src/f{i % 300}.py"}}
        return "post-tool-use", {**base, **tool, "tool_use_id": f"t{i}"}
    if kind == 2:
        tool = {"tool_name": "Bash", "tool_input": {"command": f"pytest -k case{i}"}}
        return "post-tool-use", {**base, **tool, "tool_use_id": f"t{i}"}
    return "pre-tool-use", {
        **base,
        "tool_name": "Write",
        "tool_input": {"file_path": f"{repo}/src/f{i % 300}.py"},
        "tool_use_id": f"w{i}",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--every", type=int, default=10_000)
    args = parser.parse_args()
    print(_stats.machine_line(_stats.machine_info()))
    root = Path(tempfile.mkdtemp(prefix="colony-bench-relay-mem-"))
    home = root / "home"
    home.mkdir(mode=0o700)
    repo = git_repo(root)
    os.environ["COLONY_TASKS_HOME"] = str(home)
    relay = subprocess.Popen([sys.executable, "-P", "-m", "colony_tasks.relay"], cwd=root)
    path = wire.socket_path(wire.LOCAL_KEY)
    status = None
    for _ in range(500):
        try:
            status = wire.ask(path, {"v": wire.VERSION, "op": "ping"}, 1.0)
        except wire.NoRelay:
            status = None
        if status:
            break
        time.sleep(0.01)
    if not status:
        raise SystemExit("the relay did not start")
    for s in range(SESSIONS):
        sid = f"mem-{s}"
        start = {"session_id": sid, "cwd": str(repo), "source": "startup"}
        req = request("session-start", "claude", start, json.dumps(start).encode())
        wire.ask(path, {"v": wire.VERSION, **req}, 10.0)
    idle = wire.ask(path, {"v": wire.VERSION, "op": "ping"}, 5.0) or {}
    rows = [{"events": 0, "rss_kb": idle.get("rss_kb")}]
    _stats.log(f"idle relay: {idle.get('rss_kb')} kB")
    started = time.perf_counter()
    for i in range(1, args.events + 1):
        event, payload = payload_for(i, repo)
        req = request(event, "claude", payload, json.dumps(payload).encode())
        reply = wire.ask(path, {"v": wire.VERSION, **req}, 10.0)
        if reply is None or "error" in reply:
            raise SystemExit(f"event {i} failed: {reply}")
        if i % args.every == 0:
            now = wire.ask(path, {"v": wire.VERSION, "op": "ping"}, 5.0) or {}
            rows.append({"events": i, "rss_kb": now.get("rss_kb")})
            _stats.log(f"{i} events: {now.get('rss_kb')} kB")
    elapsed = time.perf_counter() - started
    wire.ask(path, {"v": wire.VERSION, "op": "stop"}, 5.0)
    relay.wait(30)
    print("relay RSS by events applied:")
    for row in rows:
        print(f"  {row['events']:>7} events: {row['rss_kb']} kB")
    first_tenth = rows[1]["rss_kb"] if len(rows) > 1 else rows[0]["rss_kb"]
    print(
        f"growth after the first {args.every} events: {rows[-1]['rss_kb'] - first_tenth} kB;"
        f" {args.events / elapsed:.0f} events/s over one connection at a time"
    )
    _stats.write_json(
        HERE / "results" / "relay_memory.json",
        {"events": args.events, "rows": rows, "events_per_second": args.events / elapsed},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
