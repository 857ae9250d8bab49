"""Applying one hook event: the relay's work, and a hook's own when no relay answers.

A request is an :class:`colony_tasks.relay.wire.EventRequest` on the wire, parsed and checked
once (:func:`event_values`); :func:`apply` runs the event's use case
(:data:`colony_tasks.usecases.events.USE_CASES`), renders its result
(:func:`colony_tasks.render.briefing.render`) and returns the reply the client passes on to the
agent: ``{"context": ..., "deny": ...}``. Events the core marks for exactly-once delivery
(:data:`colony_tasks.usecases.events.DEDUPED`) claim their idempotency key in the same
transaction as their effects, so an event delivered twice — by a hook installed twice, or by a
client that fell back after its relay died mid-event — acts once. Change *how an event is
applied* here; change *what it does* in :mod:`colony_tasks.usecases.events`.
"""

from __future__ import annotations

from typing import Any

from ..render import briefing
from ..store import Store, open_local
from ..usecases import events
from ..usecases.events import Event, ToolUse
from .wire import EventRequest


def event_values(request: dict[str, Any]) -> tuple[EventRequest, Event, ToolUse | None]:
    """The request's record and the core's :class:`Event` and :class:`ToolUse` (None but
    for tool events); raises :class:`BadRequest` for a malformed one."""
    req = EventRequest.from_wire(request)
    event = Event(req.session, req.agent, req.cwd, req.pid, req.subagent)
    call = req.tool
    tool = None
    if call is not None:
        tool = ToolUse(call.name, call.action, tuple(call.paths), call.command, call.use_id)
    return req, event, tool


def apply(store: Store, request: dict[str, Any]) -> dict[str, Any]:
    """Apply one event request to ``store``; the reply for the client."""
    req, event, tool = event_values(request)
    use_case = events.USE_CASES[req.event]
    if not events.fingerprinted(req.event, tool):
        result = use_case(store, event, tool, req.fields)
    else:
        when = req.at if req.at is not None else store.now()
        with store.transaction():
            if req.key and not store.claim_event(req.key, when, events.DUPLICATE_WINDOW_SECONDS):
                return {}
            result = use_case(store, event, tool, req.fields)
    context, deny = briefing.render(store, result)
    reply = {"context": context, "deny": deny}
    block = briefing.stop_reason(store, result)
    if block:
        reply["block"] = block
    return reply


def apply_here(
    request: dict[str, Any], *, busy_timeout_ms: int | None = None, close: bool = True
) -> dict[str, Any]:
    """Apply the event in this process on this user's SQLite store (no relay answered).

    ``close=False`` when the process ends right after with ``os._exit``: closing the last
    connection would checkpoint the WAL into the database (a write and an fsync) for what a
    later commit's automatic checkpoint does for many hooks at once. Every transaction has
    committed by then."""
    store = open_local() if busy_timeout_ms is None else open_local(busy_timeout_ms=busy_timeout_ms)
    try:
        return apply(store, request)
    finally:
        if close:
            store.close()
