"""The relay reads the bases of sessions' regions (:mod:`colony_tasks.base.gitbase`) through
one long-lived ``git cat-file --batch`` per working tree: the same process across events,
ended when the relay exits. Real hooks, the real resident relay."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.gitutil import git
from tests.support.hookrun import EXE, claude, relay_status, run_hook


def cat_files(parent: int) -> list[int]:
    """The ``git cat-file`` processes whose parent is ``parent`` (Linux's /proc)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8") as handle:
                ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"cat-file" in argv:
            found.append(int(name))
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def edit(home: Path, repo: Path, old: str, new: str) -> None:
    path = repo / "core.py"
    tool = {
        "tool_name": "Edit",
        "tool_input": {"file_path": str(path), "old_string": old, "new_string": new},
    }
    assert run_hook("pre-tool-use", claude("pre-tool-use", "s", repo, **tool), home).returncode == 0
    path.write_text(path.read_text().replace(old, new, 1))
    post = claude("post-tool-use", "s", repo, tool_response={"success": True}, **tool)
    assert run_hook("post-tool-use", post, home).returncode == 0


@pytest.mark.skipif(
    not os.path.isdir("/proc/self"), reason="counting a process's children reads /proc (Linux)"
)
def test_the_relay_keeps_one_cat_file_process_across_events_and_ends_it_at_exit(
    home: Path, repo: Path
):
    (repo / "core.py").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    git(repo, "add", "core.py")
    git(repo, "commit", "-q", "-m", "core")
    run_hook("session-start", claude("session-start", "s", repo), home)
    pid = relay_status(home)["pid"]
    served = relay_status(home)["served"]
    edit(home, repo, "line 3\n", "line three\n")
    [first] = cat_files(pid)
    for n in (7, 11, 15):
        edit(home, repo, f"line {n}\n", f"line {n}!\n")
    status = relay_status(home)
    assert status["pid"] == pid and status["served"] >= served + 8  # the relay applied them
    assert status["git_processes"] == 1 and cat_files(pid) == [first]
    env = {**os.environ, "COLONY_TASKS_HOME": str(home)}
    stopped = subprocess.run([str(EXE), "relay", "stop"], capture_output=True, text=True, env=env)
    assert stopped.returncode == 0
    deadline = time.monotonic() + 10
    while (alive(pid) or alive(first)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(first)
