"""Waking idle sessions: the CPU of many idle waits, and the latency of a wake.

    python bench/wake.py [--sessions 20] [--seconds 60] [--runs 10]

Starts a relay on a fresh SQLite store, registers ``--sessions`` Claude sessions and starts,
for each, the real background Stop handler (``colony-tasks hook wait``, one process per
session, as Claude Code starts it). Then, for ``--seconds`` each, measures the CPU time (user +
system, from /proc) of the relay and of every waiting process together:

- **idle**: nobody writes (what an hour of idle sessions costs, per second);
- **busy lane**: another session writes a chatter note once a second (each write changes the
  store's data_version, so the relay looks for wake items once per write; nothing wakes);
- **baseline** (same run, first): the relay alone with no waits.

Figures are the share of one core over the window (100% = one core busy). Then ``--runs``
wakes: a question addressed to one waiting session, from another connection (as an MCP
server's), timed from the ask's commit to the waiting process's exit with code 2.
Results go to bench/results/wake.json. Linux only (/proc).
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
from colony_tasks.store import open_local  # noqa: E402
from colony_tasks.usecases import actions  # noqa: E402
from hooks import git_repo  # noqa: E402

EXE = str(Path(sys.executable).with_name("colony-tasks"))
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def start_wait(home: Path, repo: Path, sid: str) -> subprocess.Popen:
    payload = home.parent / f"stop-{sid}.json"
    payload.write_text(
        json.dumps(
            {
                "session_id": sid,
                "cwd": str(repo),
                "hook_event_name": "Stop",
                "transcript_path": f"/h/.claude/{sid}.jsonl",
                "stop_hook_active": False,
            }
        )
    )
    with payload.open("rb") as stdin:
        return subprocess.Popen(
            [EXE, "hook", "wait", "--agent", "claude"],
            stdin=stdin,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )


def held(sids: list[str], timeout: float = 30.0) -> None:
    store = open_local()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            marks = ",".join("?" * len(sids))
            row = store._one(
                f"SELECT COUNT(*) FROM sessions WHERE wake_since IS NOT NULL AND id IN ({marks})",
                sids,
            )
            if row and row[0] == len(sids):
                return
            time.sleep(0.05)
    finally:
        store.close()
    raise SystemExit("the waits were not all held")


def window(pids: list[int], seconds: float, chatter: bool, author: str) -> float:
    """The share of one core the processes used over ``seconds``."""
    store = open_local() if chatter else None
    before, started = cpu_seconds(pids), time.monotonic()
    n = 0
    while time.monotonic() - started < seconds:
        if store is not None:
            actions.post(store, author, f"chatter {n}")
            n += 1
        time.sleep(1.0 if store is not None else min(5.0, seconds))
    used = cpu_seconds(pids) - before
    if store is not None:
        store.close()
    return used / (time.monotonic() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    print(_stats.machine_line(_stats.machine_info()))
    root = Path(tempfile.mkdtemp(prefix="colony-bench-wake-"))
    home = root / "home"
    home.mkdir(mode=0o700)
    repo = git_repo(root)
    os.environ["COLONY_TASKS_HOME"] = str(home)
    os.environ["COLONY_TASKS_RELAY_IDLE"] = "3600"
    relay = subprocess.Popen([sys.executable, "-P", "-m", "colony_tasks.relay"], cwd=root)
    path = wire.socket_path(wire.LOCAL_KEY)
    for _ in range(500):
        try:
            if wire.ask(path, {"op": "ping"}, 1.0):
                break
        except wire.NoRelay:
            pass
        time.sleep(0.01)
    sids = [f"idle-{i}" for i in range(args.sessions)] + ["asker"]
    for sid in sids:
        start = {"session_id": sid, "cwd": str(repo), "source": "startup"}
        agent = "codex" if sid == "asker" else "claude"
        req = request("session-start", agent, start, json.dumps(start).encode())
        req["pid"] = None  # no owner: the human asking below is not taken for one of them
        wire.ask(path, req, 10.0)
    waiting = sids[:-1]
    results: dict[str, object] = {"sessions": args.sessions, "seconds": args.seconds}
    try:
        base = window([relay.pid], args.seconds, False, "asker")
        _stats.log(f"relay alone: {100 * base:.3f}% of a core")
        waits = {sid: start_wait(home, repo, sid) for sid in waiting}
        held(waiting)
        pids = [relay.pid, *(w.pid for w in waits.values())]
        idle = window(pids, args.seconds, False, "asker")
        _stats.log(f"{args.sessions} idle waits: {100 * idle:.3f}% of a core")
        busy = window(pids, args.seconds, True, "asker")
        _stats.log(f"{args.sessions} waits, chatter each second: {100 * busy:.3f}% of a core")
        results.update({"baseline_share": base, "idle_share": idle, "busy_lane_share": busy})
        latencies = []
        store = open_local()
        for run in range(args.runs):
            sid = waiting[run % len(waiting)]
            proc = waits[sid]
            handle = store.get_session(sid).handle
            started = time.perf_counter()
            question = f"Question {run}: which port?"
            # A human asks (as at the CLI): agents asking agents trip the loop guard after 8.
            actions.as_human(
                store,
                "dana",
                str(repo),
                lambda me, q=question, to=handle: actions.ask(store, me, q, to=to),
            )
            proc.wait(30)
            latencies.append(time.perf_counter() - started)
            assert proc.returncode == 2, proc.stderr.read() if proc.stderr else b""
            waits[sid] = start_wait(home, repo, sid)
            held([sid])
        store.close()
        lat = _stats.stat("wake latency (ask → woken hook exits 2)", latencies)
        _stats.print_stat(lat)
        results["latency"] = lat
    finally:
        wire.ask(path, {"op": "stop"}, 5.0)
        relay.wait(30)
    print(
        f"CPU, share of one core: relay alone {100 * base:.3f}%;"
        f" {args.sessions} idle waits (relay + clients) {100 * idle:.3f}%;"
        f" with chatter once a second {100 * busy:.3f}%"
    )
    _stats.write_json(HERE / "results" / "wake.json", results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
