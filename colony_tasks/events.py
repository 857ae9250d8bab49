"""The agent lifecycle, one function per event: plain values in, a :class:`Result` out.

Hooks parse the agent's payload into an :class:`Event` (and a :class:`ToolUse`), call one
function here and render the result; everything else — registering the session, recording
prompts, edits and commands, auto-claiming edited files, the edit policy (warn, or deny in
block mode), what is delivered when — is decided here, each in its own transactions.
Standard library only: every hook process imports this module.
"""

from __future__ import annotations

import zlib

from . import activity, briefing, delivery, settings
from . import claims as claims_mod
from . import sessions as sessions_mod
from .models import Session, record
from .store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


class Event(record("Event", "session_id agent cwd agent_pid", defaults=(None,))):  # type: ignore[misc]
    """Who raised a lifecycle event: the agent's session id, its kind, its working folder and
    the agent process the hook runs under."""

    __slots__ = ()


class ToolUse(record("ToolUse", "name action paths command", defaults=((), ""))):  # type: ignore[misc]
    """A tool call in our terms: ``action`` is ``edit`` (``paths`` are the files it writes),
    ``shell`` (``command`` is what it runs) or ``other``."""

    __slots__ = ()


class Result(record("Result", "context deny", defaults=(None, None))):  # type: ignore[misc]
    """Text to inject into the agent's context, or a reason to deny a tool call."""

    __slots__ = ()


NOTHING = Result()
DUPLICATE_WINDOW_SECONDS = 60


def first_time(store: Store, event: str, payload: bytes) -> bool:
    """Whether this is the first hook to see this exact payload for this event.

    With colony-tasks installed at both user and project scope (or a plugin beside an
    install), the agent runs each of our hooks twice with byte-identical input; without this
    every prompt, edit and command would be recorded twice. Both agents put a fresh id in
    every payload they mean to be distinct (Claude's ``prompt_id`` and ``tool_use_id``,
    Codex's ``turn_id`` and ``tool_use_id``), so (session, event, turn) is in the bytes; a
    SessionStart/Stop repeated identically within the window only refreshes the session.
    """
    digest = f"{zlib.crc32(payload):08x}{zlib.adler32(payload):08x}{len(payload):x}"
    return store.first_sighting(f"{event}:{digest}", DUPLICATE_WINDOW_SECONDS)


def _joined(parts: Sequence[str | None]) -> Result:
    text = "\n\n".join(p for p in parts if p)
    return Result(context=text or None)


def _session(store: Store, event: Event) -> Session:
    """The event's session, registered on first sight (hooks installed mid-session), moved
    when its folder changed, reopened after an end — only by the agent process that owns it
    (:func:`colony_tasks.sessions.check_owner`)."""
    session = store.get_session(event.session_id) if event.session_id else None
    if session is not None:
        sessions_mod.check_owner(session, event.agent_pid)
    if session is None or (event.cwd and event.cwd != session.cwd) or session.ended_at is not None:
        return sessions_mod.register(
            store,
            event.session_id,
            agent=event.agent,
            cwd=event.cwd or ".",
            agent_pid=event.agent_pid,
        ).session
    store.refresh_session(event.session_id, agent_pid=event.agent_pid)
    return session


def _undeliverable(store: Store, me: Session) -> str | None:
    if not store.has_undeliverable(me.id):
        return None
    return briefing.undeliverable(store.undelivered_for_sender(me.id))


def session_start(store: Store, event: Event) -> Result:
    """Register (or refresh) the session, join its lane task, and brief it. A session new to
    the task is not sent the task's history again as news at its first prompt."""
    joined = sessions_mod.register(
        store, event.session_id, agent=event.agent, cwd=event.cwd or ".", agent_pid=event.agent_pid
    )
    if joined.new_participant:
        delivery.mark_briefed(store, joined.session, joined.task.id)
    return Result(context=briefing.briefing(store, joined))


def prompt(store: Store, event: Event, text: str) -> Result:
    """Record the prompt and deliver what is new since the session's last turn."""
    me = _session(store, event)
    if text.strip():
        activity.record_prompt(store, me, text)
    groups = [
        delivery.updates_since(store, me, task.id, limit=briefing.MAX_ITEMS)
        for task in store.tasks_of_session(me.id)
    ]
    return _joined([briefing.delta(store, me, groups), _undeliverable(store, me)])


def before_tool(store: Store, event: Event, tool: ToolUse) -> Result:
    """Before an edit: warn about others' live claims and recent edits of its files; deny it
    instead when the user chose ``claims.mode = block`` and a live claim is in the way."""
    if tool.action != "edit" or not tool.paths:
        return NOTHING
    me = _session(store, event)
    rel = activity.repo_paths(store, me, tool.paths, event.cwd)
    lane = store.get_lane(me.lane_id) if me.lane_id else None
    if not rel or lane is None:
        return NOTHING
    found = claims_mod.conflicts_for(store, me, rel, lane)
    warning = briefing.conflict_warning(found, after=False, now=store.now())
    if warning and any(c.live for c in found) and settings.get("claims", "mode") == "block":
        return Result(deny=warning + "\n(claims.mode is block: this edit was denied.)")
    return Result(context=warning)


def after_tool(store: Store, event: Event, tool: ToolUse) -> Result:
    """After a tool: record the edit (auto-claiming its files) or the command, warn at once
    about a collision, and deliver what is addressed to the session or urgent."""
    me = _session(store, event)
    notes: list[str | None] = []
    if tool.action == "edit":
        notes.append(_after_edit(store, me, tool, event.cwd))
    elif tool.action == "shell" and tool.command.strip():
        activity.record_command(store, me, tool.command, tool=tool.name)
    notes.append(briefing.mid_turn(store, me, delivery.deliver_directed(store, me)))
    notes.append(_undeliverable(store, me))
    return _joined(notes)


def _after_edit(store: Store, me: Session, tool: ToolUse, cwd: str | None) -> str | None:
    rel = activity.repo_paths(store, me, tool.paths, cwd)
    lane = store.get_lane(me.lane_id) if me.lane_id else None
    if not rel or lane is None:
        return None
    with store.transaction():
        found = claims_mod.conflicts_for(store, me, rel, lane)
        activity.record_edit(store, me, rel, tool=tool.name)
        claims_mod.grant(
            store,
            me,
            rel,
            lane,
            task_id=activity.lane_task_id(store, me),
            ttl_minutes=claims_mod.AUTO_TTL_MINUTES,
            note=claims_mod.AUTO_NOTE,
        )
    live = [c for c in found if c.live]
    return briefing.conflict_warning(live, after=True, now=store.now())


def stop(store: Store, event: Event) -> Result:
    """The agent finished a turn: the session is still alive."""
    _session(store, event)
    return NOTHING


def session_end(store: Store, event: Event) -> Result:
    """End the session and release its claims — unless it belongs to another live agent
    process (a payload that merely carries its id ends nothing)."""
    session = store.get_session(event.session_id) if event.session_id else None
    if session is not None:
        sessions_mod.check_owner(session, event.agent_pid)
        sessions_mod.end_session(store, session)
    return NOTHING
