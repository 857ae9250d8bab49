"""Two "machines" for team-mode tests: each a data folder (HOME), a clone of one bare origin and
its own identity, with hooks run as real subprocesses against one PostgreSQL store."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from colony_tasks.base import backend
from tests.support.gitutil import git
from tests.support.hookrun import HookRun, run_hook


def spool(
    box: Any,
    row_key: str,
    event: str,
    agent: str,
    payload: dict[str, Any],
    *,
    pid: int | None = None,
) -> dict[str, Any]:
    """Spool one hook payload in an outbox as a team-mode hook does; the spooled request."""
    import json

    from colony_tasks.hooks.payload import request

    req = request(event, agent, payload, json.dumps(payload).encode()).to_wire()
    req["pid"] = pid
    box.put(row_key, event, agent, req, session_id=req["session"], agent_pid=pid)
    return req


def wait_for(condition, timeout: float = 30.0, step: float = 0.02) -> Any:
    """Poll ``condition`` until it returns something truthy; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(step)


@dataclass
class Machine:
    name: str
    home: Path
    clone: Path
    url: str
    developer: str
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        return {
            "COLONY_TASKS_DATABASE_URL": self.url,
            "COLONY_TASKS_MACHINE": self.name,
            "COLONY_TASKS_DEVELOPER": self.developer,
            "TMPDIR": str(self.home.parent),
            **self.extra_env,
        }

    def hook(self, event: str, payload: dict[str, Any], agent: str = "claude") -> HookRun:
        return run_hook(event, payload, self.home, agent=agent, env=self.env)

    def key_file(self, suffix: str) -> Path:
        return self.home / f"relay-{backend.store_key(self.url)}.{suffix}"

    def outbox(self) -> Path:
        return self.home / f"outbox-{backend.store_key(self.url)}.db"

    def relay_pid(self) -> int | None:
        try:
            pid = int(self.key_file("pid").read_text().strip())
            os.kill(pid, 0)
            return pid
        except (OSError, ValueError):
            return None

    def stop_relay(self, sig: int = signal.SIGTERM) -> None:
        pid = self.relay_pid()
        if pid is None:
            return
        os.kill(pid, sig)
        wait_for(lambda: not _alive(pid), timeout=15)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child of this process stays a zombie until reaped.
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def make_machines(tmp_path: Path, url: str, names=("laptop", "ci-runner-3")) -> list[Machine]:
    origin = tmp_path / "origin.git"
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q")
    (seed / "README.md").write_text("hello\n")
    git(seed, "add", "README.md")
    git(seed, "commit", "-q", "-m", "init")
    git(seed, "checkout", "-q", "-b", "feature/search")
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(origin))
    machines = []
    # The same hosted remote, spelled as each developer cloned it; git maps it to the bare
    # origin here (insteadOf), so fetch and push still work without a network.
    hosted = ("git@git.example.com:team/repo.git", "https://git.example.com/team/repo")
    for name, developer, remote in zip(names, ("alice", "bob"), hosted, strict=False):
        root = tmp_path / name
        root.mkdir()
        clone = root / "repo"
        git(root, "clone", "-q", "-b", "feature/search", str(origin), str(clone))
        git(clone, "remote", "set-url", "origin", remote)
        git(clone, "config", f"url.{origin}.insteadOf", remote)
        machines.append(Machine(name, root / "home", clone, url, developer))
    return machines


def claude_payload(event: str, sid: str, cwd: Path, **fields: Any) -> dict[str, Any]:
    names = {
        "session-start": "SessionStart",
        "user-prompt-submit": "UserPromptSubmit",
        "pre-tool-use": "PreToolUse",
        "post-tool-use": "PostToolUse",
        "stop": "Stop",
        "session-end": "SessionEnd",
    }
    return {"session_id": sid, "cwd": str(cwd), "hook_event_name": names[event], **fields}


def write_payload(sid: str, cwd: Path, rel: str, event: str = "post-tool-use") -> dict[str, Any]:
    return claude_payload(
        event,
        sid,
        cwd,
        tool_name="Write",
        tool_input={"file_path": str(cwd / rel), "content": "x = 1\n"},
    )


def context(run: HookRun) -> str:
    import json

    if not run.stdout.strip():
        return ""
    return json.loads(run.stdout)["hookSpecificOutput"].get("additionalContext", "")
