"""Waking an idle Codex session through its own app-server: ``codex queue``.

Codex runs hooks only synchronously, so no background Stop handler waits for it as one does
for Claude Code (:mod:`colony_tasks.relay.waits`). Codex 0.169 has another lever: its shared
local app-server (``codex app-server daemon``, auto-started by the TUI unless ``--no-daemon``)
hosts threads for its clients, and ``codex queue --thread ID --message TEXT`` asks it
(``thread/queue/add``) to submit a user turn to that thread as soon as it idles — at once for
an idle thread. The relay uses it for a Codex session that stopped (:func:`target`): what
wakes it and when is the core's (:mod:`colony_tasks.domain.wake`); this module only delivers.

Only where the turn would really start now:

- the session's agent process (the one its hooks run under, bound at SessionStart) is a Codex
  app-server (``codex app-server ...``): its thread is hosted there. A session of ``codex
  exec`` or of a TUI with an embedded server is not: a queued item would only be written to
  ``CODEX_HOME/queue_1.sqlite`` and dispatched after that process's *next* turn, which its
  own hooks deliver anyway — so nothing is queued for it;
- its executable is the agent process's own (``/proc/<pid>/exe``, an absolute path), never a
  ``codex`` looked up on a PATH;
- its ``CODEX_HOME`` is the agent process's (its environment, else ``~/.codex`` of its
  ``HOME``), and the daemon's control socket there accepts a connection.

The message is short and carries no item text (a command line is visible to every local
user): who sent what, and how to read it. Linux only (``/proc``); elsewhere nothing is queued.
"""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import dataclass
from typing import Any

from ..base import paths, procs
from ..base.kinds import AgentKind
from ..domain import wake
from ..render import briefing
from ..store import Store
from .waits import Waits

#: How long ``codex queue`` may take (it connects to the daemon and returns).
TIMEOUT = 30.0
SOCKET = ("app-server-control", "app-server-control.sock")


@dataclass(frozen=True)
class Target:
    """A Codex app-server that hosts a session's thread: its executable and home."""

    exe: str
    codex_home: str
    home: str


def _environ(pid: int) -> dict[str, str]:
    try:
        with open(f"{procs.PROC_ROOT}/{pid}/environ", "rb") as handle:
            raw = handle.read()
    except OSError:
        return {}
    pairs = (entry.split(b"=", 1) for entry in raw.split(b"\0") if b"=" in entry)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


def _answers(folder: str, name: str) -> bool:
    """Whether the Unix socket ``folder/name`` accepts a connection: reached through a file
    descriptor of its folder, since a socket address holds at most ~107 bytes."""
    try:
        handle = os.open(folder, os.O_PATH | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(1.0)
            probe.connect(f"{procs.PROC_ROOT}/self/fd/{handle}/{name}")
    except OSError:
        return False
    finally:
        os.close(handle)
    return True


def target(pid: int | None) -> Target | None:
    """The app-server daemon that is agent process ``pid``, reachable now; None when ``pid``
    is no Codex app-server (``codex exec``, an embedded server), or its socket is silent."""
    if pid is None:
        return None
    argv = procs.command_line(pid) or []
    if "app-server" not in argv[1:3]:
        return None
    try:
        exe = os.readlink(f"{procs.PROC_ROOT}/{pid}/exe")
    except OSError:
        return None
    if not os.path.isabs(exe) or not os.path.isfile(exe):
        return None
    env = _environ(pid)
    home = env.get("HOME", "")
    codex_home = env.get("CODEX_HOME") or (os.path.join(home, ".codex") if home else "")
    if not os.path.isabs(codex_home) or not _answers(
        os.path.join(codex_home, SOCKET[0]), SOCKET[1]
    ):
        return None
    return Target(exe=exe, codex_home=codex_home, home=home)


def send(where: Target, thread_id: str, text: str) -> bool:
    """Queue ``text`` as the next user turn of thread ``thread_id``; whether Codex took it."""
    env = {"CODEX_HOME": where.codex_home, "HOME": where.home, "PATH": "/usr/bin:/bin"}
    command = [where.exe, "queue", "--thread", thread_id, "--message", text]
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        paths.log(f"relay: codex queue failed: {type(error).__name__}")
        return False
    if done.returncode != 0:
        paths.log(f"relay: codex queue exited {done.returncode}")
    return done.returncode == 0


def watch(waits: Waits, store: Store, request: dict[str, Any]) -> bool:
    """After the relay applied ``request``: a Codex session that stopped, hosted by a
    reachable app-server, is watched until an item wakes it (its Stop is the last event of an
    idle session); whether a watch is held."""
    if request.get("event") != "stop" or request.get("agent") != AgentKind.CODEX:
        return False
    session_id, pid = request.get("session"), request.get("pid")
    if not isinstance(session_id, str) or not isinstance(pid, int):
        return False
    session = store.get_session(session_id)
    if session is None or session.ended_at is not None or session.agent_pid != pid:
        return False
    if not wake.enabled(store, session):
        return False
    where = target(pid)
    if where is None:
        return False
    return waits.watch(
        store, session_id, pid, lambda items: send(where, session_id, briefing.wake_note(items))
    )
