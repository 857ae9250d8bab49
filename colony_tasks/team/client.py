"""The hook side of team mode: spool the event (redacted), ask the local relay, fail open.

Standard library only (socket, sqlite3): a hook process never imports a database driver. The
event is in the outbox before the relay is asked, so a relay that is down, slow or killed
loses nothing: it (or the next relay started) applies the outbox in order later.
"""

from __future__ import annotations

import _socket
import json
import os
import sys
import time
import zlib

from .. import backend, paths
from ..procs import agent_pid
from .outbox import Outbox, outbox_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: How long a hook waits for the relay's answer when the team store is up. Past it the hook
#: returns nothing (fails open) and the event is still applied by the relay.
REPLY_WAIT = float(os.environ.get("COLONY_TASKS_RELAY_WAIT", "0.5"))
#: How long the first hook of a machine waits for a relay it just started.
SPAWN_WAIT = 2.0
MAX_SOCKET_PATH = 100


def socket_path(store_key: str) -> str:
    """``relay-<key>.sock`` in the data folder, or a short name in the temp folder when the
    data folder's path is too long for a unix socket (the relay checks the peer's uid)."""
    candidate = os.path.join(paths.home(), f"relay-{store_key}.sock")
    if len(candidate.encode()) <= MAX_SOCKET_PATH:
        return candidate
    digest = f"{zlib.crc32(candidate.encode()):08x}"
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"ct-relay-{os.getuid()}-{digest}.sock")


def lock_path(store_key: str) -> str:
    return os.path.join(paths.home(), f"relay-{store_key}.lock")


def pid_path(store_key: str) -> str:
    return os.path.join(paths.home(), f"relay-{store_key}.pid")


class NoRelay(Exception):
    """Nothing listens on the relay's socket (never started, exited, or killed)."""


def ask(path: str, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """One request, one reply line; None when the relay did not answer in time. Raises
    :class:`NoRelay` when no relay listens."""
    deadline = time.monotonic() + timeout
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(max(timeout, 0.001))
        try:
            sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError) as error:
            raise NoRelay(str(error)) from None
        sock.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        return json.loads(data) if data.endswith(b"\n") else None
    except (OSError, ValueError):
        return None
    finally:
        sock.close()


def spawn_relay() -> None:
    """Start the relay detached (its own session, no terminal, stdio on /dev/null). A second
    relay started by a concurrent hook exits at once: the first holds the lock."""
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        os.posix_spawn(
            sys.executable,
            [sys.executable, "-m", "colony_tasks.team.daemon"],
            os.environ,
            file_actions=[(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)],
            setsid=True,
        )
    finally:
        os.close(devnull)


def handle(url: str, event: str, agent: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """Spool the event, have the relay apply it, return its reply (``context``/``deny``)."""
    key = backend.store_key(url)
    session_id = payload.get("session_id")
    # The tool's output is read by no use case (a SQLite-mode hook never looks at it) and is
    # the bulk of a PostToolUse payload: not spooled, so not redacted on the hook path either.
    spooled = {k: v for k, v in payload.items() if k != "tool_response"}
    box = Outbox(outbox_path(key))
    try:
        row_id = box.put(
            os.urandom(12).hex(),
            event,
            agent,
            spooled,
            session_id=session_id if isinstance(session_id, str) else "",
            # SessionStart/End establish or check who owns the session: the exact agent.
            agent_pid=agent_pid(cheap=event not in ("session-start", "session-end")),
        )
    finally:
        box.close()
    path = socket_path(key)
    request = {"id": row_id, "event": event, "session": session_id}
    try:
        return ask(path, request, REPLY_WAIT)
    except NoRelay:
        pass
    spawn_relay()
    deadline = time.monotonic() + SPAWN_WAIT
    while time.monotonic() < deadline:
        try:
            return ask(path, request, max(deadline - time.monotonic(), 0.05))
        except NoRelay:
            time.sleep(0.01)  # the relay is still starting
    return None
