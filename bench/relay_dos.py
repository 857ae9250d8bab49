"""The relay's resources under attack by another process of the same user (issue 37), for
this tree and (same run) an earlier commit:

1. **Slow clients**: 400 connections that send ``{`` and then nothing: the relay's threads
   while they are open, and a bystander hook's time (and whether its prompt was kept).
2. **Partial big requests**: 50 connections that each send up to 4 MB with no end of line and
   stay open: the bytes the relay took from them, and its resident memory's growth.
3. **Forged versions**: 200 requests claiming another version, a hook-like client starting a
   relay whenever it finds none: how many relays were started, and whether a held wake wait
   survived.
4. **100,000 paths**: a PostToolUse naming 100,000 files sent to the relay, and a bystander's
   prompt sent 0.1 s later: the bystander's time, and the paths recorded.

Run ``python bench/relay_dos.py [--baseline COMMIT]`` (default: main). Each scenario runs in a
child process of its tree (``PYTHONPATH``) with a fresh data folder; it takes about a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SLOW_CLIENTS = 400
BIG_CLIENTS = 50
BIG_BYTES = 4 * 1024 * 1024 - (1 << 16)  # just under the 4 MB cap of issue 37's relay
FORGED = 200
PATHS = 100_000


def _relay_pid(home: Path) -> int:
    from tests.support.hookrun import relay_status

    return int(relay_status(home)["pid"])


def _proc(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def _hook(home: Path, event: str, payload: dict) -> float:
    """Run a real hook process; its time."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "colony_tasks", "hook", event, "--agent", "claude"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={**os.environ, "COLONY_TASKS_HOME": str(home)},
        timeout=60,
        cwd=home,
    )
    return time.perf_counter() - start


def _prompts(home: Path) -> list[str]:
    import sqlite3

    with sqlite3.connect(home / "colony.db") as db:
        return [r[0] for r in db.execute("SELECT text FROM observations WHERE kind = 'prompt'")]


def _connect(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    return sock


def slow(home: Path, repo: Path) -> dict:
    from colony_tasks.relay import wire
    from tests.support.hookrun import claude

    _hook(home, "session-start", claude("session-start", "s", repo))
    pid = _relay_pid(home)
    before = _proc(pid, "Threads")
    held = []
    for _ in range(SLOW_CLIENTS):
        try:
            sock = _connect(wire.socket_path(wire.LOCAL_KEY))
            sock.sendall(b"{")
            held.append(sock)
        except OSError:
            break
    time.sleep(0.5)
    threads = _proc(pid, "Threads")
    took = _hook(home, "user-prompt-submit", claude("user-prompt-submit", "s", repo, prompt="by"))
    for sock in held:
        sock.close()
    return {
        "threads before": before,
        "threads with slow clients": threads,
        "bystander hook s": round(took, 3),
        "bystander kept": "by" in _prompts(home),
    }


def big(home: Path, repo: Path) -> dict:
    from colony_tasks.relay import wire
    from tests.support.hookrun import claude

    _hook(home, "session-start", claude("session-start", "s", repo))
    pid = _relay_pid(home)
    rss = _proc(pid, "VmRSS")
    taken = [0] * BIG_CLIENTS
    socks = []

    def push(i: int) -> None:
        chunk = b"x" * (1 << 16)
        try:
            sock = _connect(wire.socket_path(wire.LOCAL_KEY))
            socks.append(sock)
            sock.settimeout(3.0)
            while taken[i] < BIG_BYTES:
                taken[i] += sock.send(chunk)
        except OSError:
            pass

    pushers = [threading.Thread(target=push, args=(i,)) for i in range(BIG_CLIENTS)]
    for t in pushers:
        t.start()
    for t in pushers:
        t.join()
    grown = _proc(pid, "VmRSS") - rss
    for sock in socks:
        sock.close()
    return {"bytes taken (MB)": round(sum(taken) / 1e6, 1), "relay RSS growth (MB)": grown // 1000}


def forged(home: Path, repo: Path) -> dict:
    from colony_tasks.relay import wire
    from tests.support.hookrun import claude
    from tests.support.standin import StandIn

    victim = StandIn(home, repo, "victim", wait=True)
    try:
        from tests.support.helpers import wait_held

        wait_held(victim.sid)
        first = _relay_pid(home)
        pids = {first}
        for i in range(FORGED):
            request = {"op": "event", "event": "stop", "session": "x", "v": f"9.{i}"}
            try:
                sock = _connect(wire.socket_path(wire.LOCAL_KEY))
                sock.sendall(json.dumps(request).encode() + b"\n")
                sock.recv(1 << 16)
                sock.close()
            except OSError:  # no relay: a hook would start one
                wire.spawn()
                time.sleep(0.05)
            try:
                pid = (home / "relay-local.pid").read_text().strip()
                pids.add(int(pid))
            except (OSError, ValueError):
                pass
        time.sleep(0.5)
        ended = victim.wait_done()
        _hook(home, "user-prompt-submit", claude("user-prompt-submit", "s", repo, prompt="x"))
        return {"relays started": len(pids) - 1, "victim's wait ended": ended}
    finally:
        victim.stop()


def paths(home: Path, repo: Path) -> dict:
    from colony_tasks.hooks.payload import request
    from colony_tasks.relay import wire
    from tests.support.hookrun import claude

    for sid in ("a", "b"):
        _hook(home, "session-start", claude("session-start", sid, repo))
    _relay_pid(home)

    def record(event: str, payload: dict) -> dict:
        found = request(event, "claude", payload, json.dumps(payload).encode()).to_wire()
        return {**found, "pid": os.getpid(), "v": wire.VERSION}

    many = record(
        "post-tool-use",
        claude("post-tool-use", "a", repo, tool_name="Write", tool_input={"file_path": "x"}),
    )
    many["tool"]["paths"] = [f"f{i:x}" for i in range(PATHS)]
    path = wire.socket_path(wire.LOCAL_KEY)
    attacker = threading.Thread(target=wire.ask, args=(path, many, 60.0))
    attacker.start()
    time.sleep(0.1)
    start = time.perf_counter()
    reply = wire.ask(
        path, record("user-prompt-submit", claude("user-prompt-submit", "b", repo)), 60
    )
    took = time.perf_counter() - start
    attacker.join()
    import sqlite3

    with sqlite3.connect(home / "colony.db") as db:
        kept = db.execute("SELECT COUNT(*) FROM observation_paths").fetchone()[0]
    return {
        "bystander s": round(took, 3),
        "bystander answered": reply is not None,
        "paths recorded": kept,
    }


SCENARIOS = {"slow clients": slow, "partial big requests": big, "forged versions": forged}
SCENARIOS["100,000 paths"] = paths


def child(name: str) -> None:
    from tests.support.gitutil import make_repo

    tmp = Path(tempfile.mkdtemp(prefix="rdos-"))
    home = tmp / "h"
    home.mkdir(mode=0o700)
    os.environ["COLONY_TASKS_HOME"] = str(home)
    repo = make_repo(tmp / "proj")
    try:
        print(json.dumps(SCENARIOS[name](home, repo)))
    finally:
        from colony_tasks.relay import wire

        try:
            wire.ask(wire.socket_path(wire.LOCAL_KEY), {"op": "stop"}, 2.0)
        except wire.NoRelay:
            pass


def run(tree: Path, name: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-P", str(HERE / "relay_dos.py"), "--child", name],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tree,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        return f"failed: {done.stderr.strip()[-300:]}"
    return ", ".join(f"{k}: {v}" for k, v in json.loads(lines[-1]).items())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--only", nargs="*", choices=list(SCENARIOS), help="these rows only")
    parser.add_argument("--child", choices=list(SCENARIOS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    old = Path(tempfile.mkdtemp(prefix="rdos-base-")) / "tree"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(old), args.baseline],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    try:
        print(f"| attack | this tree | {args.baseline} |")
        print("|---|---|---|")
        for name in args.only or SCENARIOS:
            print(f"| {name} | {run(ROOT, name)} | {run(old, name)} |", flush=True)
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, capture_output=True
        )


if __name__ == "__main__":
    main()
