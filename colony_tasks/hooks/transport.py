"""How a hook has its event applied, chosen once per hook process (:func:`choose`).

- :class:`ViaRelay`: this user's relay applies it (the usual case); when none answers in time
  the event is applied here (:class:`InProcess`) and, if none was running, a relay is started
  for the next hook.
- :class:`InProcess`: this process applies it on the local SQLite store, within the hook's
  deadline (``COLONY_TASKS_RELAY=off``, or no relay answered).
- :class:`Spooled`: team mode. The event goes to the durable local outbox and the team relay is
  asked for its result (:mod:`.spool`); a hook never opens the team's database.

Every transport takes the wire record (:class:`colony_tasks.relay.wire.EventRequest`) and
returns the relay's reply (``context``, ``deny``, ``block``) or None. Tests pass their own
transport to :func:`colony_tasks.hooks.runner.handle` instead of starting relays.
"""

from __future__ import annotations

import os

from ..base import backend
from ..relay import wire

# The hook client imports no `typing` (~1.5 ms of every hook): see TYPE_CHECKING in docs/relay.md.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..relay.wire import EventRequest

#: How long a hook may take in all (it applies its event itself past the relay's wait).
DEADLINE_SECONDS = 8.0
#: How long a hook waits for its relay's reply before applying the event itself (the relay's
#: own work for an event is a few milliseconds; a busy store can make it wait).
RELAY_WAIT = float(os.environ.get("COLONY_TASKS_RELAY_WAIT", "3"))
# SessionEnd has the smallest budget of all: Claude's plugin hooks share 1.5 s (3 s when
# installed in settings), Codex gives 1 s. An agent that kills the hook mid-way loses the
# log line too; so it waits on its relay and then on a locked store only briefly and gives up
# on its own, well inside the budget. A session it could not end stays open until `doctor
# --fix` (or the next run's reaping) ends it as silent; its claims expire at their TTL.
SESSION_END_RELAY_WAIT = 0.3
SESSION_END_DEADLINE_SECONDS = 0.5
SESSION_END_BUSY_MS = 250


class Deadline(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise Deadline("hook exceeded its deadline")


class Transport:
    """Has one event applied; the reply for the agent, or None."""

    def send(self, request: EventRequest) -> dict[str, Any] | None:
        raise NotImplementedError


class InProcess(Transport):
    """Applies the event in this process, within the hook's deadline (a timer that interrupts
    a store wait or a bug's loop; the event's transaction then rolls back).

    ``keep_store_open``: the process ends right after with ``os._exit``, so the store is left
    for the exit to drop (closing the last connection would checkpoint the WAL: see
    :func:`colony_tasks.relay.apply.apply_here`)."""

    def __init__(self, *, keep_store_open: bool = False) -> None:
        self.keep_store_open = keep_store_open

    def send(self, request: EventRequest) -> dict[str, Any] | None:
        import signal  # only here: a hook that reaches its relay never needs a timer

        from ..relay.apply import apply_here

        session_end = request.event == "session-end"
        timer = hasattr(signal, "setitimer")
        if timer:
            signal.signal(signal.SIGALRM, _on_alarm)
            limit = SESSION_END_DEADLINE_SECONDS if session_end else DEADLINE_SECONDS
            signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            return apply_here(
                request.to_wire(),
                busy_timeout_ms=SESSION_END_BUSY_MS if session_end else None,
                close=not self.keep_store_open,
            )
        finally:
            if timer:
                signal.setitimer(signal.ITIMER_REAL, 0)


class ViaRelay(Transport):
    """Asks this user's relay; applies the event with ``fallback`` when none answers."""

    def __init__(self, fallback: InProcess) -> None:
        self.fallback = fallback

    def send(self, request: EventRequest) -> dict[str, Any] | None:
        start = False
        wait = SESSION_END_RELAY_WAIT if request.event == "session-end" else RELAY_WAIT
        try:
            reply = wire.ask(wire.socket_path(wire.relay_key(None)), request.to_wire(), wait)
        except wire.NoRelay:
            reply, start = None, True
        if reply is not None and not reply.get("retire"):
            return reply if "error" not in reply else None  # the relay logged why
        try:
            return self.fallback.send(request)
        finally:
            if start:
                # For the next hook; started once this one's work is done, so that the relay's
                # start does not compete with it for the machine.
                wire.spawn()


class Spooled(Transport):
    """Team mode: no database driver in this process; the relay applies the spooled event."""

    def __init__(self, url: str) -> None:
        self.url = url

    def send(self, request: EventRequest) -> dict[str, Any] | None:
        from . import spool

        return spool.handle(self.url, request.to_wire())


def choose(*, keep_store_open: bool = False) -> Transport:
    """The transport of this hook process: spooled in team mode, else the relay (unless
    ``COLONY_TASKS_RELAY`` is off) with this process as its fallback."""
    url = backend.store_url()
    if url:
        return Spooled(url)
    here = InProcess(keep_store_open=keep_store_open)
    return ViaRelay(here) if wire.enabled() else here
