"""Applying one hook event: the relay's work, and a hook's own when no relay answers.

A request holds the core's plain event values (see :func:`event_values`); :func:`apply` runs
the matching use case of :mod:`colony_tasks.usecases.events`, renders its result
(:func:`colony_tasks.render.briefing.render`) and returns the reply the client passes on to the
agent: ``{"context": ..., "deny": ...}``. Events the core marks for exactly-once delivery
(:data:`colony_tasks.usecases.events.DEDUPED`) claim their idempotency key in the same transaction as
their effects, so an event delivered twice — by a hook installed twice, or by a client that
fell back after its relay died mid-event — acts once. Change *how an event is applied* here;
change *what it does* in :mod:`colony_tasks.usecases.events`.
"""

from __future__ import annotations

from typing import Any

from ..base.redact import utf8_safe
from ..render import briefing
from ..store import Store, open_local
from ..usecases import events
from ..usecases.events import Event, Result, ToolUse

TOOL_EVENTS = frozenset({"pre-tool-use", "post-tool-use", "post-tool-use-failure"})


class BadRequest(ValueError):
    """A request that is not a well-formed event (a client of another shape, or garbage)."""


def _text(request: dict[str, Any], key: str) -> str:
    """A string field; lone surrogates (half an emoji from the agent's JSON) replaced, so the
    event is recorded instead of failing its write."""
    value = request.get(key)
    return utf8_safe(value) if isinstance(value, str) else ""


def event_values(request: dict[str, Any]) -> tuple[str, Event, ToolUse | None]:
    """The request's (event name, :class:`Event`, :class:`ToolUse` or None); raises
    :class:`BadRequest` for a malformed one."""
    name = _text(request, "event")
    if name not in events.EVENTS:
        raise BadRequest(f"unknown event {name!r}")
    pid = request.get("pid")
    event = Event(
        _text(request, "session"),
        _text(request, "agent") or "claude",
        _text(request, "cwd"),
        pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        _text(request, "subagent"),
    )
    tool = None
    raw_tool = request.get("tool")
    if raw_tool is not None:
        if not isinstance(raw_tool, list) or len(raw_tool) != 5:
            raise BadRequest("tool must be [name, action, paths, command, use_id]")
        tool_name, action, tool_paths, command, use_id = raw_tool
        if action not in ("edit", "read", "shell", "other") or not isinstance(tool_paths, list):
            raise BadRequest("malformed tool")
        tool = ToolUse(
            utf8_safe(str(tool_name)),
            action,
            tuple(utf8_safe(str(p)) for p in tool_paths),
            utf8_safe(str(command or "")),
            utf8_safe(str(use_id or "")),
        )
    if name in TOOL_EVENTS and tool is None:
        raise BadRequest(f"{name} needs a tool")
    return name, event, tool


def _run(
    store: Store, name: str, event: Event, tool: ToolUse | None, request: dict[str, Any]
) -> Result:
    """The event's one use case in :mod:`colony_tasks.usecases.events`."""
    if name == "session-start":
        return events.session_start(store, event, _text(request, "source") or "startup")
    if name == "user-prompt-submit":
        return events.prompt(store, event, _text(request, "prompt"))
    if name == "subagent-start":
        return events.subagent_start(store, event, _text(request, "agent_type"))
    if name in TOOL_EVENTS:
        assert tool is not None
        if name == "pre-tool-use":
            return events.before_tool(store, event, tool)
        return events.after_tool(store, event, tool, failed=name == "post-tool-use-failure")
    if name == "stop":
        return events.stop(store, event, request.get("active") is True)
    if name == "stop-failure":
        return events.stop_failure(store, event, _text(request, "error"))
    if name == "notification":
        return events.notification(store, event, _text(request, "notification_type"))
    return events.session_end(store, event)


def apply(store: Store, request: dict[str, Any]) -> dict[str, Any]:
    """Apply one event request to ``store``; the reply for the client."""
    name, event, tool = event_values(request)
    if not events.fingerprinted(name, tool):
        result = _run(store, name, event, tool, request)
    else:
        key = _text(request, "key")
        at = request.get("at")
        when = float(at) if isinstance(at, int | float) else store.now()
        with store.transaction():
            if key and not store.claim_event(key, when, events.DUPLICATE_WINDOW_SECONDS):
                return {}
            result = _run(store, name, event, tool, request)
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
