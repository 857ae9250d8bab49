"""The hook side of team mode: spool the event (redacted), ask the local relay, fail open.

Standard library only (socket, sqlite3): a hook process never imports a database driver. The
event request is in the outbox before the relay is asked, so a relay that is down, slow or
killed loses nothing: it (or the next relay started) applies the outbox in order later. Only
the event's plain values are spooled (paths, the command, the prompt), never a tool's input
or output: nothing the store would not keep.
"""

from __future__ import annotations

import os
import time

from ..relay import wire
from ..relay.outbox import Outbox, outbox_path

# The hook client imports no `typing` (~1.5 ms of every hook): see TYPE_CHECKING in docs/relay.md.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: How long a hook waits for the relay's answer when the team store is up. Past it the hook
#: returns nothing (fails open), the event is still applied by the relay, and what its reply
#: says is shown at the session's next hook (the relay is told the wait: ``wait``).
REPLY_WAIT = float(os.environ.get("COLONY_TASKS_RELAY_WAIT", "0.5"))
#: How long the first hook of a machine waits for a relay it just started.
SPAWN_WAIT = 2.0


def handle(url: str, request: dict[str, Any]) -> dict[str, Any] | None:
    """Spool the event, have the relay apply it, return its reply (``context``/``deny``)."""
    key = wire.relay_key(url)
    box = Outbox(outbox_path(key))
    try:
        row_id = box.put(
            os.urandom(12).hex(),
            str(request["event"]),
            str(request["agent"]),
            request,
            session_id=str(request.get("session") or ""),
            agent_pid=request.get("pid"),
        )
    finally:
        box.close()
    path = wire.socket_path(key)
    ask = {"op": "spooled", "id": row_id}
    ask.update(event=request["event"], session=request.get("session"))
    try:
        return _answer(wire.ask(path, {**ask, "wait": REPLY_WAIT}, REPLY_WAIT))
    except wire.NoRelay:
        pass
    wire.spawn()
    deadline = time.monotonic() + SPAWN_WAIT
    while time.monotonic() < deadline:
        wait = max(deadline - time.monotonic(), 0.05)
        try:
            return _answer(wire.ask(path, {**ask, "wait": wait}, wait))
        except wire.NoRelay:
            time.sleep(0.01)  # the relay is still starting
    return None


def _answer(reply: dict[str, Any] | None) -> dict[str, Any] | None:
    """A relay of another version retires and applies nothing more: the event stays spooled
    for the relay the next hook starts."""
    return None if reply is None or reply.get("retire") else reply
