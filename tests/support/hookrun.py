"""Run the installed console script as a hook subprocess with real payloads."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EXE = Path(sys.executable).parent / "colony-tasks"


def apply_payload(store: Any, event: str, payload: dict[str, Any], agent: str) -> dict[str, Any]:
    """Apply one hook payload in this process, as the relay (or a hook without one) does:
    the hook client's parsing, then the relay's application."""
    from colony_tasks.hooks.payload import request
    from colony_tasks.relay.apply import apply

    raw = json.dumps(payload).encode()
    return apply(store, request(event, agent, payload, raw).to_wire())


@dataclass
class HookRun:
    returncode: int
    stdout: str
    stderr: str


def run_hook(
    event: str,
    payload: Any,
    home: Path,
    *,
    agent: str | None = None,
    raw: bytes | None = None,
    timeout: float = 30,
    env: dict | None = None,
) -> HookRun:
    args = [str(EXE), "hook", event] + (["--agent", agent] if agent else [])
    data = raw if raw is not None else json.dumps(payload).encode()
    result = subprocess.run(
        args,
        input=data,
        capture_output=True,
        timeout=timeout,
        env={**os.environ, "COLONY_TASKS_HOME": str(home), **(env or {})},
    )
    return HookRun(result.returncode, result.stdout.decode(), result.stderr.decode())


def relay_status(home: Path, timeout: float = 10.0) -> dict[str, Any]:
    """Wait until the relay of the SQLite store under ``home`` answers; its status."""
    import time

    from colony_tasks.relay import wire

    deadline = time.monotonic() + timeout
    path = str(home / f"relay-{wire.LOCAL_KEY}.sock")
    while True:
        try:
            reply = wire.ask(path, {"v": wire.VERSION, "op": "ping"}, 1.0)
        except wire.NoRelay:
            reply = None
        if reply and "pid" in reply:
            return reply
        if time.monotonic() > deadline:
            found = sorted(p.name for p in home.iterdir()) if home.exists() else None
            raise AssertionError(f"no relay answered under {home} within {timeout}s: {found}")
        time.sleep(0.01)


_IDS = itertools.count(1)


def claude(event: str, sid: str, cwd: Path, **fields: Any) -> dict[str, Any]:
    names = {
        "session-start": "SessionStart",
        "user-prompt-submit": "UserPromptSubmit",
        "pre-tool-use": "PreToolUse",
        "post-tool-use": "PostToolUse",
        "post-tool-use-failure": "PostToolUseFailure",
        "subagent-start": "SubagentStart",
        "stop": "Stop",
        "stop-failure": "StopFailure",
        "notification": "Notification",
        "session-end": "SessionEnd",
    }
    payload = {
        "session_id": sid,
        "transcript_path": f"/home/u/.claude/projects/p/{sid}.jsonl",
        "cwd": str(cwd),
        "hook_event_name": names[event],
    }
    if event in (
        "pre-tool-use",
        "post-tool-use",
        "post-tool-use-failure",
        "user-prompt-submit",
        "stop",
    ):
        payload["permission_mode"] = "default"
    # Like the real CLI (../shared/payloads): every prompt and tool call carries ids of its own.
    if event != "session-start":
        payload["prompt_id"] = f"prompt-{next(_IDS)}"
    if event in ("pre-tool-use", "post-tool-use", "post-tool-use-failure"):
        payload["tool_use_id"] = f"toolu_{next(_IDS)}"
    payload.update(fields)
    return payload


def codex(event: str, sid: str, cwd: Path, **fields: Any) -> dict[str, Any]:
    """Codex payloads with exactly the fields its published input schemas require."""
    names = {
        "session-start": "SessionStart",
        "user-prompt-submit": "UserPromptSubmit",
        "pre-tool-use": "PreToolUse",
        "post-tool-use": "PostToolUse",
        "subagent-start": "SubagentStart",
        "stop": "Stop",
        "session-end": "SessionEnd",
    }
    payload: dict[str, Any] = {
        "session_id": sid,
        "transcript_path": None,
        "cwd": str(cwd),
        "hook_event_name": names[event],
        "model": "gpt-5.5-codex",
    }
    if event != "session-end":
        payload["permission_mode"] = "default"
    if event not in ("session-start", "session-end"):
        payload["turn_id"] = f"turn-{next(_IDS)}"
    if event in ("pre-tool-use", "post-tool-use"):
        payload["tool_use_id"] = f"call_{next(_IDS)}"
    if event == "session-end":
        payload.pop("model")
        payload["reason"] = "other"
    payload.update(fields)
    return payload


def patch(*headers: str) -> str:
    body = "\n".join(f"{h}\n@@\n-old\n+new" for h in headers)
    return f"*** Begin Patch\n{body}\n*** End Patch\n"
