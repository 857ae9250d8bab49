"""Applying one hook event: the relay's work, and a hook's own when no relay answers.

A request is an :class:`colony_tasks.relay.wire.EventRequest` on the wire, parsed and checked
once, here (:func:`parse`); :func:`apply` runs the event's use case
(:data:`colony_tasks.usecases.events.USE_CASES`), renders its result
(:func:`colony_tasks.render.briefing.render`) and returns the reply the client passes on to the
agent: ``{"context": ..., "deny": ...}``. Events the core marks for exactly-once delivery
(:data:`colony_tasks.usecases.events.DEDUPED`) claim their idempotency key in the same
transaction as their effects, so an event delivered twice — by a hook installed twice, or by a
client that fell back after its relay died mid-event — acts once. :func:`apply_batch` applies
consecutive events in one transaction (the team relay's spooled rows: one write lock and one
commit for several events). On a team store an event's transaction is shared: it waits only
for events that write the same task (:meth:`colony_tasks.store.base.StoreBase.transaction`),
and runs again under the whole store's lock when it lost a lock race. Change *how an event is applied* here; change
*what it does* in :mod:`colony_tasks.usecases.events`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, TypeVar

from ..base import paths
from ..base.agent_events import EVENTS, is_tool_action
from ..base.errors import Contended
from ..base.text import utf8_safe
from ..render import briefing
from ..store import Store, open_local
from ..store.faults import storage_failure
from ..usecases import events
from ..usecases.events import Event, ToolUse
from . import held
from .bounds import MAX_PATHS
from .wire import EventRequest, ToolCall

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


T = TypeVar("T")


class BadRequest(ValueError):
    """A request that is not a well-formed event (a client of another shape, or garbage)."""


def _text(value: object) -> str:
    """A string field of a request ('' when it is not one); lone surrogates (half an emoji
    from the agent's JSON) replaced, so the event is recorded instead of failing its write."""
    return utf8_safe(value) if isinstance(value, str) else ""


def parse_tool(value: object) -> ToolCall:
    """The tool call of a request; also the positional ``[name, action, paths, command,
    use_id]`` of clients before 0.4 (events they spooled are applied after an upgrade). Its
    first :data:`.bounds.MAX_PATHS` files are kept, the rest counted (``more``): an event
    naming 100,000 files would hold the store's write lock for seconds."""
    if isinstance(value, list) and len(value) == 5:
        value = dict(zip(("name", "action", "paths", "command", "use_id"), value, strict=True))
    if not isinstance(value, dict):
        raise BadRequest("tool must be an object")
    action, tool_paths = value.get("action"), value.get("paths")
    if not is_tool_action(action) or not isinstance(tool_paths, list):
        raise BadRequest("malformed tool")
    edits = value.get("edits") or []
    if not isinstance(edits, list) or not all(
        isinstance(e, list) and len(e) == 4 and all(isinstance(x, str) for x in e) for e in edits
    ):
        raise BadRequest("malformed edits")
    call = ToolCall(
        _text(str(value.get("name") or "")),
        action,
        [_text(str(p)) for p in tool_paths[:MAX_PATHS]],
        _text(str(value.get("command") or "")),
        _text(str(value.get("use_id") or "")),
        [[_text(x) for x in e] for e in edits[:MAX_PATHS]],
    )
    call.more = max(len(tool_paths) - MAX_PATHS, 0)
    return call


def parse(request: dict[str, Any]) -> EventRequest:
    """The event of a request; raises :class:`BadRequest` for a malformed one. Fields are the
    event row's (:data:`colony_tasks.base.agent_events.EVENTS`), each of its type, with its
    default when absent (a client before 0.4 sent them at the top level)."""
    name = _text(request.get("event"))
    row = EVENTS.get(name)
    if row is None:
        raise BadRequest(f"unknown event {name!r}")
    raw_fields = request.get("fields")
    given = raw_fields if isinstance(raw_fields, dict) else request
    fields: dict[str, str | bool] = {}
    for field, _key, default in row.fields:
        value = given.get(field)
        fields[field] = value is True if default is False else (_text(value) or default)
    raw_tool = request.get("tool")
    tool = parse_tool(raw_tool) if row.tool and raw_tool is not None else None
    if row.tool and tool is None:
        raise BadRequest(f"{name} needs a tool")
    pid, at = request.get("pid"), request.get("at")
    return EventRequest(
        name,
        _text(request.get("agent")) or "claude",
        session=_text(request.get("session")),
        cwd=_text(request.get("cwd")),
        pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        subagent=_text(request.get("subagent")),
        key=_text(request.get("key")),
        at=float(at) if isinstance(at, int | float) and not isinstance(at, bool) else None,
        tool=tool,
        fields=fields,
    )


def event_values(request: dict[str, Any]) -> tuple[EventRequest, Event, ToolUse | None]:
    """The request's record and the core's :class:`Event` and :class:`ToolUse` (None but
    for tool events); raises :class:`BadRequest` for a malformed one."""
    req = parse(request)
    event = Event(req.session, req.agent, req.cwd, req.pid, req.subagent)
    call = req.tool
    tool = None
    if call is not None:
        tool = ToolUse(
            call.name,
            call.action,
            tuple(call.paths),
            call.command,
            call.use_id,
            tuple(tuple(e) for e in call.edits),
        )
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
    if req.tool is not None and req.tool.more:
        context = "\n\n".join(filter(None, (context, _cut_note(req.event, req.tool))))
    reply = {"context": context, "deny": deny}
    block = briefing.stop_reason(store, result)
    if block:
        reply["block"] = block
    return reply


class BatchFailed(Exception):
    """A request of a batch raised (the core refused it, or a statement failed): the whole
    batch was rolled back. ``index``: that request's place in the batch; the cause is chained."""

    def __init__(self, index: int) -> None:
        super().__init__(f"request {index} of the batch failed; the batch was rolled back")
        self.index = index


def apply_alone(store: Store, request: dict[str, Any]) -> dict[str, Any]:
    """:func:`apply` in a shared transaction of its own (see :func:`_shared`)."""

    def alone(shared: bool) -> dict[str, Any]:
        with store.transaction(shared):
            return apply(store, request)

    return _shared(alone)


def apply_batch(
    store: Store,
    requests: Sequence[dict[str, Any]],
    budget: float | None = None,
    starting: Callable[[], None] | None = None,
) -> list[dict[str, Any] | BadRequest]:
    """Apply consecutive requests in order in one transaction of ``store``: their replies,
    the :class:`BadRequest` of a malformed one (it fails its parsing before it touches the
    store, and is dropped). Each event claims its idempotency key in that transaction (:func:`apply`), so
    the batch commits whole or not at all. No request is started once ``budget`` seconds have
    passed (the transaction holds the store's write lock): the replies are then fewer than the
    requests, and the rest wait for the next batch; so they do once an event has written into
    a task of a team store (the task is locked until the commit: other machines' events that
    write there wait for it). ``starting`` is called as each request starts. The transaction
    is shared (see :func:`_shared`). Any other exception rolls the
    whole batch back and raises :class:`BatchFailed`, the exception chained as its cause."""
    return _shared(lambda shared: _batch(store, requests, budget, starting, shared))


def _shared(work: Callable[[bool], T]) -> T:
    """``work(True)``: in a shared transaction, which on a team store waits only for events
    writing the same task; when it lost a lock race (:class:`Contended`, alone or as a failed
    batch's cause: rolled back, nothing of it applied), logged and ``work(False)``, under the
    whole store's lock (rare; frequent lines mean machines' batches cross on the same tasks)."""
    try:
        return work(True)
    except (Contended, BatchFailed) as error:
        lost = error if isinstance(error, Contended) else error.__cause__
        if not isinstance(lost, Contended):
            raise
        paths.log(f"relay: {lost}; applied again under the whole store's lock")
    return work(False)


def _batch(
    store: Store,
    requests: Sequence[dict[str, Any]],
    budget: float | None,
    starting: Callable[[], None] | None,
    shared: bool,
) -> list[dict[str, Any] | BadRequest]:
    replies: list[dict[str, Any] | BadRequest] = []
    start = time.monotonic()
    with store.transaction(shared):
        for index, request in enumerate(requests):
            if replies and budget is not None and time.monotonic() - start > budget:
                break
            if replies and store.holds_locks():  # others wait for this commit: no more now
                break
            if starting is not None:
                starting()
            try:
                replies.append(apply(store, request))
            except BadRequest as malformed:
                replies.append(malformed)
            except Exception as error:
                raise BatchFailed(index) from error
    return replies


def _cut_note(event: str, tool: ToolCall) -> str:
    """What the agent (and the log) is told of a tool call's files past the cap."""
    named = len(tool.paths) + tool.more
    paths.log(f"{event} named {named} files: applied with the first {MAX_PATHS}")
    return (
        f"colony-tasks: this tool call names {named:,} files; only the first {MAX_PATHS:,}"
        " were checked against other sessions' claims and recorded."
    )


def apply_here(
    request: dict[str, Any],
    *,
    busy_timeout_ms: int | None = None,
    close: bool = True,
    check_wal: bool = False,
) -> dict[str, Any]:
    """Apply the event in this process on this user's SQLite store (no relay answered).

    ``close=False`` when the process ends right after with ``os._exit``: closing the last
    connection would checkpoint the WAL into the database (a write and an fsync) for what a
    later commit's automatic checkpoint does for many hooks at once. Every transaction has
    committed by then. ``check_wal``: before the open, keep and record what a damaged WAL
    would lose (:func:`colony_tasks.store.wal.preserve`; no relay runs, so this may be the first
    open since a crash). An event the store cannot take is held (:mod:`.held`)."""
    if check_wal:
        from ..store import wal  # only a relay-less hook: the first open since a crash

        wal.preserve(paths.db_path())
    try:
        store = (
            open_local() if busy_timeout_ms is None else open_local(busy_timeout_ms=busy_timeout_ms)
        )
    except Exception as error:
        cause = storage_failure(error)
        if cause is not None and held.hold(request, cause):
            return {}
        raise
    try:
        if held.waiting() and not held.drain(lambda earlier: apply(store, earlier)):
            held.hold(request, "events before it are still held")
            return {}
        return apply(store, request)
    except Exception as error:
        cause = storage_failure(error)
        if cause is not None and held.hold(request, cause):
            return {}  # applied once the store takes writes again (colony_tasks.relay.held)
        raise
    finally:
        if close:
            store.close()
