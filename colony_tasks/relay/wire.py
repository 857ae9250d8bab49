"""The relay's wire: where its socket lives, how a client asks it, how one is started.

One request per connection: a JSON object on one line, answered by one JSON line. Every
request carries ``v``, the client's version: a relay of another version retires (finishes what
it has in flight and exits) and answers ``{"retire": true}``, so nothing is served by old code
after an upgrade.

The socket is ``relay-<key>.sock`` in the data folder (0700), or, when that path is too long
for a unix socket, in this user's private folder under the temp folder (0700, checked). It is
created 0600 and the relay also checks the peer's uid. Standard library only: every hook
client imports this module.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import zlib

from .. import __version__
from ..base import backend, paths

# The hook client imports no `typing` (~1.5 ms of every hook): see TYPE_CHECKING in docs/relay.md.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..base.agent_events import ToolAction

VERSION = __version__
#: How long ``colony-tasks search`` waits for a relay's answer (its first search loads the
#: vector index) before searching in its own process.
SEARCH_WAIT = 30.0
#: The key of this user's SQLite store (one per data folder); a team store's is
#: :func:`colony_tasks.base.backend.store_key` of its URL.
LOCAL_KEY = "local"
MAX_SOCKET_PATH = 100
MAX_REPLY = 16 * 1024 * 1024


def relay_key(url: str | None) -> str:
    """Which relay serves the store at ``url``: the one of this user's SQLite store for None,
    else the team store's (its :func:`~colony_tasks.base.backend.store_key`)."""
    return backend.store_key(url) if url else LOCAL_KEY


class NoRelay(Exception):
    """Nothing listens on the relay's socket (never started, exited, killed), or this user
    may not reach it."""


class ToolCall:
    """A tool call in the core's terms: ``action`` is ``edit`` (``paths`` are the files it
    writes), ``read`` (the files it reads), ``shell`` (``command`` is what it runs) or
    ``other``; ``use_id`` pairs a PreToolUse with its PostToolUse."""

    __slots__ = ("name", "action", "paths", "command", "use_id")

    def __init__(
        self, name: str, action: ToolAction, paths: list[str], command: str = "", use_id: str = ""
    ) -> None:
        self.name = name
        self.action = action
        self.paths = paths
        self.command = command
        self.use_id = use_id

    def to_wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "action": self.action,
            "paths": self.paths,
            "command": self.command,
            "use_id": self.use_id,
        }


class EventRequest:
    """One agent event as a hook sends it to be applied: the event (our name, a row of
    :data:`colony_tasks.base.agent_events.EVENTS`), the agent's kind, its session id, working
    folder and agent process, the subagent that acted ('' for the session itself), the
    idempotency key and send time, the tool call (tool events) and the event's fields. Built
    by the hook client (:func:`colony_tasks.hooks.payload.request`), parsed and checked once
    where it is applied (:func:`colony_tasks.relay.apply.parse`)."""

    __slots__ = (
        "event",
        "agent",
        "session",
        "cwd",
        "pid",
        "subagent",
        "key",
        "at",
        "tool",
        "fields",
    )

    def __init__(
        self,
        event: str,
        agent: str,
        *,
        session: str = "",
        cwd: str = "",
        pid: int | None = None,
        subagent: str = "",
        key: str = "",
        at: float | None = None,
        tool: ToolCall | None = None,
        fields: dict[str, str | bool] | None = None,
    ) -> None:
        self.event = event
        self.agent = agent
        self.session = session
        self.cwd = cwd
        self.pid = pid
        self.subagent = subagent
        self.key = key
        self.at = at
        self.tool = tool
        self.fields = fields if fields is not None else {}

    def to_wire(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "op": "event",
            "event": self.event,
            "agent": self.agent,
            "session": self.session,
            "cwd": self.cwd,
            "pid": self.pid,
            "subagent": self.subagent,
            "key": self.key,
            "at": self.at,
            "fields": self.fields,
        }
        if self.tool is not None:
            found["tool"] = self.tool.to_wire()
        return found


def socket_path(store_key: str) -> str:
    """Where the relay for ``store_key`` listens: in the data folder, or where its path would
    be too long for a unix socket (about 100 bytes), in this user's private folder under the
    temp folder (or under /tmp, when even that is too long)."""
    candidate = os.path.join(paths.home(), f"relay-{store_key}.sock")
    if len(candidate.encode()) <= MAX_SOCKET_PATH:
        return candidate
    name = f"r-{zlib.crc32(candidate.encode()):08x}.sock"
    short = os.path.join(paths.fallback_dir(), name)
    if len(short.encode()) <= MAX_SOCKET_PATH:
        return short
    return os.path.join("/tmp", f"colony-tasks-{os.getuid()}", name)


def lock_path(store_key: str) -> str:
    return os.path.join(paths.home(), f"relay-{store_key}.lock")


def pid_path(store_key: str) -> str:
    return os.path.join(paths.home(), f"relay-{store_key}.pid")


def event_key(event: str, raw: bytes) -> str:
    """The idempotency key of one hook event: its name and a digest of the agent's exact
    bytes. Both agents put a fresh id in every payload they mean to be distinct (Claude's
    ``prompt_id`` and ``tool_use_id``, Codex's ``turn_id`` and ``tool_use_id``), so the same
    key twice means the same event: delivered twice by a hook installed twice, or applied by a
    relay that died before it could answer."""
    return f"{event}:{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}{len(raw):x}"


def ask(path: str, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """Send one request, stamped with this client's version, and return the reply; None when
    none came within ``timeout`` (the relay is slow, or died mid-request). Raises
    :class:`NoRelay` when nothing listens."""
    request = {**request, "v": VERSION}
    deadline = time.monotonic() + timeout
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(max(timeout, 0.001))
        try:
            sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError, PermissionError) as error:
            raise NoRelay(str(error)) from None
        # ASCII JSON: a lone surrogate (half an emoji in the agent's payload) travels as an escape.
        sock.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n") and len(data) <= MAX_REPLY:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            data += chunk
        reply = json.loads(data) if data.endswith(b"\n") else None
        return reply if isinstance(reply, dict) else None
    except (OSError, ValueError):
        return None
    finally:
        sock.close()


def spawn() -> None:
    """Start a relay for this user's store, detached (its own session, stdio on /dev/null).
    One started by a concurrent client as well exits at once: the first holds the lock.

    ``-P``: the hook runs in the agent's working folder, and ``python -m`` would otherwise put
    that folder first on the import path — a repository with a ``colony_tasks`` folder of its
    own would run as the relay."""
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        os.posix_spawn(
            sys.executable,
            [sys.executable, "-P", "-m", "colony_tasks.relay"],
            os.environ,
            file_actions=[(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)],
            setsid=True,
        )
    finally:
        os.close(devnull)


def request_once(
    store_key: str, request: dict[str, Any], timeout: float, *, start: bool = False
) -> dict[str, Any] | None:
    """Ask this user's relay for ``store_key``; None when there is none (starting one first
    when ``start``, for the next caller) or it did not answer in time."""
    try:
        return ask(socket_path(store_key), request, timeout)
    except NoRelay:
        if start:
            spawn()
        return None


def enabled() -> bool:
    """False when ``COLONY_TASKS_RELAY`` is off: every hook and search then runs in its own
    process."""
    return os.environ.get("COLONY_TASKS_RELAY", "").strip().lower() not in ("0", "off", "no")


def search(store_key: str, options: dict[str, Any]) -> dict[str, Any] | None:
    """A search answered by the relay's warm index (``{"hits": [...], "unavailable": ...}``),
    or None: no relay (one is started for the next search), disabled, or no answer in time."""
    if not enabled():
        return None
    reply = request_once(store_key, {"op": "search", **options}, SEARCH_WAIT, start=True)
    if reply is None or "hits" not in reply:
        return None
    return reply


def closing(store_key: str, agent_pid: int) -> None:
    """Tell this user's relay that the agent process ``agent_pid`` is shutting down: the wake
    waits of its sessions end (see :mod:`colony_tasks.relay.waits`). No relay: nothing to do."""
    if enabled():
        request_once(store_key, {"op": "closing", "pid": agent_pid}, 0.5)
