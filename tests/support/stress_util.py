"""Helpers for the stress suites: scaled repetition counts and processes released together.

``COLONY_STRESS_SCALE`` (default 1) multiplies every repetition count, so a developer can run
the suites quickly (``COLONY_STRESS_SCALE=0.2``) on a busy machine; CI runs the full counts.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.hookrun import EXE

SCALE = float(os.environ.get("COLONY_STRESS_SCALE") or 1)
HERE = Path(__file__).resolve().parent
ITEM = re.compile(r"^#(\d+) ")
UNDELIVERABLE_HEAD = "colony-tasks: not delivered"
# The sender's news that its items woke someone (or kept them from stopping) lists its own items.
WOKE_HEAD = "colony-tasks: your items reached idle sessions"


def scaled(count: int, minimum: int = 1) -> int:
    """``count`` times the stress scale, at least ``minimum``."""
    return max(minimum, round(count * SCALE))


@dataclass
class Job:
    """One process to start: its argv, what to write to its stdin, extra environment."""

    args: list[str]
    stdin: bytes
    env: dict[str, str]
    tag: Any = None
    preexec: Any = None


@dataclass
class Done:
    job: Job
    returncode: int
    stdout: str
    stderr: str


def hook_job(event: str, payload: Any, home: Path, tag: Any = None, **env: str) -> Job:
    return Job(
        [str(EXE), "hook", event],
        json.dumps(payload).encode(),
        {"COLONY_TASKS_HOME": str(home), **env},
        tag,
    )


def python_job(script: str, data: Any, home: Path, tag: Any = None) -> Job:
    """A helper script from this folder, reading one JSON document from stdin."""
    return Job(
        [sys.executable, str(HERE / script)],
        json.dumps(data).encode(),
        {"COLONY_TASKS_HOME": str(home)},
        tag,
    )


def blocked_on_stdin(pid: int) -> bool | None:
    """Is the process inside ``read(0, ...)``? None when ``/proc/<pid>/syscall`` cannot tell
    (not Linux, or not allowed to look)."""
    try:
        with open(f"/proc/{pid}/syscall") as handle:
            fields = handle.read().split()
    except FileNotFoundError:
        return False  # not started yet, or already gone
    except OSError:
        return None
    if not fields or fields[0] == "running":
        return False
    return len(fields) > 1 and fields[0] == "0" and int(fields[1], 16) == 0


def run_together(jobs: list[Job], *, timeout: float = 60) -> tuple[list[Done], int | None]:
    """Start every job, wait until each is blocked reading stdin, then release them all.

    Returns the results and how many processes were seen waiting at the barrier: all of them,
    or None when ``/proc`` cannot tell (the barrier is then a short fixed wait).
    """
    procs = [
        subprocess.Popen(
            job.args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **job.env},
            preexec_fn=job.preexec,
        )
        for job in jobs
    ]
    deadline = time.monotonic() + 20
    waiting: int | None = 0
    while time.monotonic() < deadline:
        states = [blocked_on_stdin(p.pid) for p in procs]
        if None in states:
            waiting = None
            time.sleep(0.5)
            break
        waiting = sum(states)
        if waiting == len(procs) or any(p.poll() is not None for p in procs):
            break
        time.sleep(0.005)
    for proc, job in zip(procs, jobs, strict=True):
        try:
            proc.stdin.write(job.stdin)
            proc.stdin.close()
        except BrokenPipeError:
            pass
        proc.stdin = None  # communicate() below must not flush the closed pipe
    done = []
    for proc, job in zip(procs, jobs, strict=True):
        out, err = proc.communicate(timeout=timeout)
        done.append(Done(job, proc.returncode, out.decode(), err.decode()))
    return done, waiting


def delivered_ids(context: str) -> list[int]:
    """Ids of thread items an injected context gave its reader (``#<id> ...`` lines).

    The "not delivered" notice and the news of whom the reader's items woke repeat the reader's
    own items: neither is a delivery.
    """
    found = []
    for block in context.split("\n\n"):
        lines = block.splitlines()
        if lines and lines[0].startswith((UNDELIVERABLE_HEAD, WOKE_HEAD)):
            continue
        for line in lines:
            match = ITEM.match(line)
            if match:
                found.append(int(match.group(1)))
    return found


def log_text(home: Path, tmp: Path) -> str:
    """The hook log and the fallback log (``TMPDIR`` points at ``tmp`` in these tests)."""
    text = ""
    for path in [home / "hooks.log", *tmp.glob("colony-tasks-*/*.log")]:
        if path.exists():
            text += path.read_text(errors="replace")
    return text
