"""The agent process a hook runs under, and the MCP server's ancestors.

Hooks record the agent's pid on the session; the MCP server, a child of the same agent, finds
its caller by walking its own ancestors to that pid. Standard library only.
"""

from __future__ import annotations

import os

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh", "busybox", "env", "timeout"})


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
