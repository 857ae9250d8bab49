"""The agent process a hook runs under, and the MCP server's ancestors.

Hooks record the agent's pid on the session; the MCP server, a child of the same agent, finds
its caller by walking its own ancestors to that pid. Standard library only.

Where the process table is read from:

- Linux (and anything with ``/proc``): ``/proc/<pid>/stat``, a file read — cheap enough for
  every hook.
- macOS: ``ps -o ppid=,comm= -p <pid>``, one short process per step. Hooks pay it only where
  an identity is established or checked (SessionStart, SessionEnd; see :func:`agent_pid`);
  the MCP server pays it once, at its first call (:func:`ancestors` is cached by the caller).
- Elsewhere: no ancestry at all. The MCP server then cannot tell its caller and an explicit
  ``session_id`` must carry the session's key (see :mod:`colony_tasks.identity`).
"""

from __future__ import annotations

import os
import sys

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh", "busybox", "env", "timeout"})
PROC_ROOT = "/proc"
PS = "/bin/ps"


def _proc_stat(pid: int) -> tuple[str, int] | None:
    try:
        with open(f"{PROC_ROOT}/{pid}/stat", encoding="utf-8", errors="replace") as handle:
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


def run_ps(pid: int) -> str | None:
    """``ps -o ppid=,comm= -p PID`` output, or None when ps is missing or the pid is gone."""
    import subprocess  # only on the non-/proc path: it costs every hook ~10 ms of imports

    try:
        done = subprocess.run(
            [PS, "-o", "ppid=,comm=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=1,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _ps_stat(pid: int) -> tuple[str, int] | None:
    out = run_ps(pid)
    if not out or not out.strip():
        return None
    ppid, _, comm = out.strip().partition(" ")
    try:
        parent = int(ppid)
    except ValueError:
        return None
    # comm is a path on macOS (/bin/zsh) and may start with "-" for a login shell.
    return os.path.basename(comm.strip()).lstrip("-"), parent


def has_proc() -> bool:
    return os.path.isdir(f"{PROC_ROOT}/self")


def backend() -> str:
    """``proc``, ``ps`` or ``none``: how this machine's process table is read."""
    if has_proc():
        return "proc"
    if sys.platform == "darwin" and os.path.exists(PS):
        return "ps"
    return "none"


def _stat(pid: int, how: str | None = None) -> tuple[str, int] | None:
    """(command name, parent pid), or None where it cannot be read."""
    how = how or backend()
    if how == "proc":
        return _proc_stat(pid)
    if how == "ps":
        return _ps_stat(pid)
    return None


def agent_pid(*, cheap: bool = False) -> int | None:
    """The agent process this hook runs under: the parent, skipping a wrapping shell (Codex
    runs hooks as shell commands; the shell is short-lived, the agent is not).

    ``cheap``: for the hooks that run on every tool call. Where reading the process table
    costs a process spawn (macOS) it returns None — "unknown, keep what SessionStart
    recorded" — rather than the shell's pid, which would never match the MCP server's.
    """
    how = backend()
    pid = os.getppid()
    if how == "none":
        return pid
    if cheap and how != "proc":
        return None
    for _ in range(4):
        info = _stat(pid, how)
        if info is None or info[0] not in SHELLS or info[1] <= 1:
            return pid
        pid = info[1]
    return pid


def ancestors(limit: int = 6) -> list[int]:
    """This process's ancestor pids, nearest first (for the MCP server's caller lookup).

    Empty where the process table cannot be read: no ancestry is better than a guess.
    """
    how = backend()
    if how == "none":
        return []
    chain = []
    pid = os.getppid()
    for _ in range(limit):
        if pid <= 1:
            break
        chain.append(pid)
        info = _stat(pid, how)
        if info is None:
            break
        pid = info[1]
    return chain


def alive(pid: int | None) -> bool:
    """Whether a process with this pid exists (a pid we may not signal still exists)."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True
