"""How a hook has its event applied, chosen once per hook process (:func:`choose`).

A transport is a function from the wire record (:class:`colony_tasks.relay.wire.EventRequest`)
to the relay's reply (``context``, ``deny``, ``block``) or None:

- :func:`via_relay`: this user's relay applies the event (the usual case); when none answers in
  time it is applied here (:func:`in_process`) and, if none was running, a relay is started for
  the next hook;
- :func:`in_process`: this process applies it on the local SQLite store, within the hook's
  deadline (``COLONY_TASKS_RELAY=off``, or no relay answered);
- :func:`spooled`: team mode. The event goes to the durable local outbox and the team relay is
  asked for its result (:mod:`.spool`); a hook never opens the team's database.

Tests pass their own function to :func:`colony_tasks.hooks.runner.handle` instead of starting
relays. Plain functions, not classes: this module is loaded by every hook process.
"""

from __future__ import annotations

import os

from ..base import backend
from ..relay import wire

# The hook client imports no `typing` (~1.5 ms of every hook): see TYPE_CHECKING in docs/relay.md.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..relay.wire import EventRequest

    Transport = Callable[[EventRequest], dict[str, Any] | None]

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


def in_process(
    request: EventRequest, *, keep_store_open: bool = False, first_open: bool = False
) -> dict[str, Any] | None:
    """Apply the event in this process, within the hook's deadline (a timer that interrupts a
    store wait or a bug's loop; the event's transaction then rolls back).

    ``keep_store_open``: the process ends right after with ``os._exit``, so the store is left
    for the exit to drop (closing the last connection would checkpoint the WAL: see
    :func:`colony_tasks.relay.apply.apply_here`). ``first_open``: no relay runs, so this may be
    the first open since a crash: the WAL is checked before it (see
    :mod:`colony_tasks.store.wal`)."""
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
            close=not keep_store_open,
            check_wal=first_open,
        )
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)


def via_relay(request: EventRequest, *, keep_store_open: bool = False) -> dict[str, Any] | None:
    """Ask this user's relay; apply the event here (:func:`in_process`) when none answers."""
    start = False
    wait = SESSION_END_RELAY_WAIT if request.event == "session-end" else RELAY_WAIT
    try:
        reply = wire.ask(wire.socket_path(wire.relay_key(None)), request.to_wire(), wait)
    except wire.NoRelay:
        reply, start = None, True
    if reply is not None and not reply.get("retire"):
        return reply if "error" not in reply else None  # the relay logged why
    try:
        # The WAL is checked only when no relay process is alive at all (after a crash), not
        # when one is merely slow or busy: the scan reads the whole log.
        first = start and not wire.relay_running(wire.LOCAL_KEY)
        return in_process(request, keep_store_open=keep_store_open, first_open=first)
    finally:
        if start:
            # For the next hook; started once this one's work is done, so that the relay's
            # start does not compete with it for the machine.
            wire.spawn()


def spooled(url: str, request: EventRequest) -> dict[str, Any] | None:
    """Team mode: no database driver in this process; the relay applies the spooled event."""
    from . import spool

    return spool.handle(url, request.to_wire())


def choose(*, keep_store_open: bool = False) -> Transport:
    """The transport of this hook process: spooled in team mode, else the relay (unless
    ``COLONY_TASKS_RELAY`` is off) with this process as its fallback."""
    url = backend.store_url()
    if url:
        return lambda request: spooled(url, request)
    if wire.enabled():
        return lambda request: via_relay(request, keep_store_open=keep_store_open)
    return lambda request: in_process(request, keep_store_open=keep_store_open)
