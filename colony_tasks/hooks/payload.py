"""Reading hook payloads: which agent sent it, which files a tool touches, the agent process."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CLAUDE_WRITE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
CODEX_PATCH_TOOLS = frozenset({"apply_patch"})
WRITE_TOOLS = CLAUDE_WRITE_TOOLS | CODEX_PATCH_TOOLS
SHELL_TOOLS = frozenset({"Bash", "PowerShell", "shell", "exec_command"})
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh", "busybox", "env", "timeout"})
PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


def text(payload: dict[str, Any], key: str) -> str:
    value = payload.get(key)
    return value if isinstance(value, str) else ""


def detect_agent(payload: dict[str, Any], event: str) -> str:
    """``codex`` or ``claude`` from the payload's shape, when no --agent was given."""
    if "turn_id" in payload:
        return "codex"
    transcript = text(payload, "transcript_path").replace("\\", "/")
    if "/.codex/" in transcript:
        return "codex"
    if "/.claude/" in transcript:
        return "claude"
    if "model" in payload and (event != "session-start" or "permission_mode" in payload):
        return "codex"  # Claude sends `model` only on SessionStart, without permission_mode
    if "transcript_path" in payload and payload["transcript_path"] is None:
        return "codex"  # Codex's transcript_path is nullable; Claude's is always a path
    return "claude"


def patch_paths(patch: Any) -> list[str]:
    """Files named by an ``apply_patch`` body (Add/Update/Delete File and Move to)."""
    if isinstance(patch, list):
        patch = "\n".join(p for p in patch if isinstance(p, str))
    if not isinstance(patch, str):
        return []
    found = []
    for line in patch.splitlines():
        line = line.strip()
        for header in PATCH_HEADERS:
            if line.startswith(header):
                name = line[len(header) :].strip()
                if name:
                    found.append(name)
                break
    return list(dict.fromkeys(found))


def tool_paths(tool_name: str, tool_input: Any) -> list[str]:
    """The files a write tool is about to change (or changed)."""
    if not isinstance(tool_input, dict):
        return []
    if tool_name in CODEX_PATCH_TOOLS:
        return patch_paths(
            tool_input.get("command", tool_input.get("patch", tool_input.get("input")))
        )
    if tool_name in CLAUDE_WRITE_TOOLS:
        found = []
        for key in ("file_path", "notebook_path", "path"):
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                found.append(value)
        return found[:1]
    return []


def shell_command(tool_input: Any) -> str:
    if not isinstance(tool_input, dict):
        return ""
    command = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(command, list):
        return " ".join(str(c) for c in command)
    return command if isinstance(command, str) else ""


def _stat(pid: int) -> tuple[str, int] | None:
    """(command name, parent pid) from /proc, or None where /proc is unavailable."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            raw = handle.read()
    except OSError:
        return None
    open_paren, close_paren = raw.find("("), raw.rfind(")")
    if open_paren < 0 or close_paren < 0:
        return None
    fields = raw[close_paren + 2 :].split()
    try:
        return raw[open_paren + 1 : close_paren], int(fields[1])
    except (IndexError, ValueError):
        return None


def agent_pid() -> int:
    """The agent process this hook runs under: the parent, skipping a wrapping shell."""
    pid = os.getppid()
    for _ in range(4):
        info = _stat(pid)
        if info is None or info[0] not in SHELLS or info[1] <= 1:
            return pid
        pid = info[1]
    return pid


def ancestors(limit: int = 6) -> list[int]:
    """This process's ancestor pids, nearest first (for the MCP server's caller lookup)."""
    chain = []
    pid = os.getppid()
    for _ in range(limit):
        if pid <= 1:
            break
        chain.append(pid)
        info = _stat(pid)
        if info is None:
            break
        pid = info[1]
    return chain
