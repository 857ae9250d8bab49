"""The agent process a hook runs under, the MCP server's ancestors, and a relay client's.

Hooks record the agent's pid on the session; the MCP server, a child of the same agent, finds
its caller by walking its own ancestors to that pid; the relay, told a client's pid by the
kernel, walks from it to the client's agent (:func:`agent_chain`) rather than believe the pid
the client sends. A hook whose agent process is not the
session's recorded, still running, owner may not end or alter it
(:func:`colony_tasks.domain.sessions.check_owner`). A wrapping shell is walked past, and so is
a process GitHub Copilot CLI started to run an extension (:func:`extension_host`): our
extension's wait acts as its Copilot session. Standard library only.

Where the process table is read from (:func:`backend`):

- Linux (and anything with ``/proc``): ``/proc/<pid>/stat``, a file read — cheap enough for
  every hook, so every hook records and checks its agent's pid.
- macOS: libproc's ``proc_pidinfo(pid, PROC_PIDTBSDINFO)`` through ``ctypes`` (the parent pid
  and the command name of one process per call, no process spawned; ``ctypes`` is imported
  the first time a pid is read, and only on macOS). As cheap as ``/proc``: every hook
  records and checks its agent's pid, as on Linux.
- macOS without a loadable libproc: ``ps -o ppid=,comm= -p <pid>``, one short process per
  step. Hooks pay it only where an identity is established or checked (SessionStart,
  SessionEnd; see :func:`agent_pid`); the per-tool hooks record no pid and check nothing.
- Elsewhere: no ancestry at all. The MCP server then cannot tell its caller and an explicit
  ``session_id`` must carry the session's key (see :mod:`colony_tasks.domain.identity`).

The MCP server reads its ancestors once, at its first call (:func:`ancestors` is cached by the
caller).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh", "busybox", "env", "timeout"})
PROC_ROOT = "/proc"
PS = "/bin/ps"
#: What GitHub Copilot CLI runs an extension with, and the variable it sets for it (its pid).
EXTENSION_BOOTSTRAP = "extension_bootstrap.mjs"
COPILOT_EXTENSION_PARENT = "COPILOT_EXTENSION_PARENT_PID"


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


def command_line(pid: int) -> list[str] | None:
    """The arguments process ``pid`` was started with (``/proc``); None where they cannot be
    read (another platform, a process gone)."""
    try:
        with open(f"{PROC_ROOT}/{pid}/cmdline", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    return [a.decode("utf-8", errors="replace") for a in raw.split(b"\0") if a]


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


# struct proc_bsdinfo (<sys/proc_info.h>): what PROC_PIDTBSDINFO fills in. The fields read:
# pbi_ppid (uint32 at 16), pbi_comm (char[MAXCOMLEN=16] at 48) and pbi_name (char[32] at 64,
# the longer name, empty if none was set).
PROC_PIDTBSDINFO = 3
BSDINFO_SIZE = 136
LIBPROC = "/usr/lib/libproc.dylib"
_libproc: list[Callable[[int], bytes | None] | None] = []


def _load_libproc() -> Callable[[int], bytes | None] | None:
    """A reader of one process's ``proc_bsdinfo`` through libproc, or None where libproc
    cannot be loaded (not macOS, or no ``ctypes``)."""
    if sys.platform != "darwin":
        return None
    try:
        import ctypes  # only on macOS, at the first pid read: most processes never need it

        library = ctypes.CDLL(LIBPROC, use_errno=True)
        proc_pidinfo = library.proc_pidinfo
    except (ImportError, OSError, AttributeError):
        return None
    proc_pidinfo.argtypes = [
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_uint64,
        ctypes.c_void_p,
        ctypes.c_int,
    ]
    proc_pidinfo.restype = ctypes.c_int

    def read(pid: int) -> bytes | None:
        buffer = ctypes.create_string_buffer(BSDINFO_SIZE)
        if proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, buffer, BSDINFO_SIZE) != BSDINFO_SIZE:
            return None  # gone, or not ours to read
        return buffer.raw

    return read


def libproc_reader() -> Callable[[int], bytes | None] | None:
    """The libproc reader, loaded once per process (see :func:`_load_libproc`)."""
    if not _libproc:
        _libproc.append(_load_libproc())
    return _libproc[0]


def _c_string(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def _libproc_stat(pid: int) -> tuple[str, int] | None:
    read = libproc_reader()
    raw = read(pid) if read is not None else None
    if raw is None or len(raw) < BSDINFO_SIZE:
        return None
    parent = int.from_bytes(raw[16:20], "little")
    name = _c_string(raw[64:96]) or _c_string(raw[48:64])
    return name.lstrip("-"), parent


def has_proc() -> bool:
    return os.path.isdir(f"{PROC_ROOT}/self")


# The backends cheap enough for the hooks that run on every tool call.
CHEAP = frozenset({"proc", "libproc"})


def backend() -> str:
    """``proc``, ``libproc``, ``ps`` or ``none``: how this machine's process table is read."""
    if has_proc():
        return "proc"
    if sys.platform == "darwin":
        if libproc_reader() is not None:
            return "libproc"
        if os.path.exists(PS):
            return "ps"
    return "none"


def _stat(pid: int, how: str | None = None) -> tuple[str, int] | None:
    """(command name, parent pid), or None where it cannot be read."""
    how = how or backend()
    if how == "proc":
        return _proc_stat(pid)
    if how == "libproc":
        return _libproc_stat(pid)
    if how == "ps":
        return _ps_stat(pid)
    return None


def agent_pid(*, cheap: bool = False) -> int | None:
    """The agent process this hook runs under: the parent, skipping a wrapping shell (Codex
    runs hooks as shell commands; the shell is short-lived, the agent is not).

    ``cheap``: for the hooks that run on every tool call. Where reading the process table
    costs a process spawn (macOS without libproc), or the parent cannot be read, it returns
    None — "unknown: record nothing, keep what SessionStart recorded" — rather than a pid
    that may be a shell's, which would never match the MCP server's nor the session's owner.
    """
    how = backend()
    pid = os.getppid()
    if how == "none":
        return pid
    if cheap and how not in CHEAP:
        return None
    for _ in range(4):
        info = _stat(pid, how)
        if info is None and cheap and how != "proc":
            return None
        if info is None or info[1] <= 1:
            return pid
        if info[0] not in SHELLS:
            # Only a process Copilot started for an extension carries its marker: other
            # hooks pay nothing for this.
            marked = os.environ.get(COPILOT_EXTENSION_PARENT) == str(info[1])
            return info[1] if marked and extension_host(pid, info[1]) else pid
        pid = info[1]
    return pid


def agent_chain(pid: int) -> list[int]:
    """Process ``pid`` and its ancestors up to the agent it runs under, nearest first: what
    :func:`agent_pid` finds from inside ``pid``, found from outside (the relay asks it about
    the client at the other end of its socket; the kernel told it the client's pid). The last
    entry is the agent; ``[pid]`` alone where the parent cannot be read."""
    how = backend()
    info = _stat(pid, how)
    if info is None or info[1] <= 1:
        return [pid]
    chain = [pid, info[1]]
    for _ in range(4):
        info = _stat(chain[-1], how)
        if info is None or info[1] <= 1:
            break
        if info[0] not in SHELLS:
            if extension_host(chain[-1], info[1]):
                chain.append(info[1])
            break
        chain.append(info[1])
    return chain


def extension_host(pid: int, parent: int) -> bool:
    """Whether ``pid`` is a process GitHub Copilot CLI (``parent``) started to run one of its
    extensions: the same program as its parent, running Copilot's extension bootstrap
    (``<copilot> <copilot> .../preloads/extension_bootstrap.mjs``). Such a process works for
    its parent alone, as a wrapping shell does, so the agent is the parent: our extension's
    ``colony-tasks hook wait`` acts as the Copilot session that started it, and no other.
    False where ``/proc`` cannot tell (another platform, another user's process)."""
    args = command_line(pid)
    if not args or len(args) < 2 or os.path.basename(args[-1]) != EXTENSION_BOOTSTRAP:
        return False
    try:
        return os.readlink(f"{PROC_ROOT}/{pid}/exe") == os.readlink(f"{PROC_ROOT}/{parent}/exe")
    except OSError:
        return False


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


def ancestry(limit: int = 64) -> list[tuple[int, str]]:
    """This process's ancestors, nearest first, each with its command name (for telling
    whether a command runs inside an agent's process tree). Empty where the process table
    cannot be read; an ancestor whose name cannot be read ends the chain."""
    how = backend()
    if how == "none":
        return []
    chain: list[tuple[int, str]] = []
    pid = os.getppid()
    for _ in range(limit):
        if pid <= 1:
            break
        info = _stat(pid, how)
        if info is None:
            break
        chain.append((pid, info[0]))
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
