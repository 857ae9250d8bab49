"""One function per lifecycle event: payload in, text to inject (or a deny reason) out."""

from __future__ import annotations

from .. import activity, briefing, sessions, settings, thread
from .. import claims as claims_mod
from ..models import Session, record
from ..store import Store
from .payload import SHELL_TOOLS, WRITE_TOOLS, agent_pid, shell_command, text, tool_paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Result(record("Result", "context deny", defaults=(None, None))):
    """Text to inject into the agent's context, or a reason to deny a tool call."""

    __slots__ = ()


NOTHING = Result()


def ensure_session(store: Store, payload: dict[str, Any], agent: str) -> Session:
    """The payload's session, registered on first sight (hooks installed mid-session)."""
    sid = text(payload, "session_id")
    cwd = text(payload, "cwd")
    session = store.get_session(sid) if sid else None
    if session is None or (cwd and cwd != session.cwd) or session.ended_at is not None:
        return sessions.register(
            store, sid, agent=agent, cwd=cwd or ".", agent_pid=agent_pid()
        ).session
    store.refresh_session(sid, agent_pid=agent_pid())
    return session


def session_start(store: Store, payload: dict[str, Any], agent: str) -> Result:
    sid = text(payload, "session_id")
    joined = sessions.register(
        store, sid, agent=agent, cwd=text(payload, "cwd") or ".", agent_pid=agent_pid()
    )
    if joined.new_participant:
        thread.mark_briefed(store, joined.session, joined.task.id)
    return Result(context=briefing.briefing(store, joined))


def user_prompt_submit(store: Store, payload: dict[str, Any], agent: str) -> Result:
    me = ensure_session(store, payload, agent)
    prompt = text(payload, "prompt")
    if prompt.strip():
        activity.record_prompt(store, me, prompt)
    groups = [
        thread.updates_since(store, me, task.id, limit=briefing.MAX_ITEMS)
        for task in store.tasks_of_session(me.id)
    ]
    parts = [briefing.delta(store, me, groups), _undeliverable(store, me)]
    return Result(context="\n\n".join(p for p in parts if p) or None)


def _undeliverable(store: Store, me: Session) -> str | None:
    if not store.has_undeliverable(me.id):
        return None
    return briefing.undeliverable(store.undelivered_for_sender(me.id))


def pre_tool_use(store: Store, payload: dict[str, Any], agent: str) -> Result:
    tool = text(payload, "tool_name")
    if tool not in WRITE_TOOLS:
        return NOTHING
    raw_paths = tool_paths(tool, payload.get("tool_input"))
    if not raw_paths:
        return NOTHING
    me = ensure_session(store, payload, agent)
    rel = activity.repo_paths(store, me, raw_paths, text(payload, "cwd"))
    lane = store.get_lane(me.lane_id) if me.lane_id else None
    if not rel or lane is None:
        return NOTHING
    found = claims_mod.conflicts_for(store, me, rel, lane)
    warning = briefing.conflict_warning(found, after=False, now=store.now())
    if warning and any(c.live for c in found) and settings.get("claims", "mode") == "block":
        return Result(deny=warning + "\n(claims.mode is block: this edit was denied.)")
    return Result(context=warning)


def post_tool_use(store: Store, payload: dict[str, Any], agent: str) -> Result:
    tool = text(payload, "tool_name")
    me = ensure_session(store, payload, agent)
    notes: list[str] = []
    if tool in WRITE_TOOLS:
        rel = activity.repo_paths(
            store, me, tool_paths(tool, payload.get("tool_input")), text(payload, "cwd")
        )
        lane = store.get_lane(me.lane_id) if me.lane_id else None
        if rel and lane is not None:
            with store.transaction():
                found = claims_mod.conflicts_for(store, me, rel, lane)
                activity.record_edit(store, me, rel, tool=tool)
                claims_mod.grant(
                    store,
                    me,
                    rel,
                    lane,
                    task_id=activity.lane_task_id(store, me),
                    ttl_minutes=claims_mod.AUTO_TTL_MINUTES,
                    note=claims_mod.AUTO_NOTE,
                )
            warning = briefing.conflict_warning(
                [c for c in found if c.live], after=True, now=store.now()
            )
            if warning:
                notes.append(warning)
    elif tool in SHELL_TOOLS:
        command = shell_command(payload.get("tool_input"))
        if command.strip():
            activity.record_command(store, me, command, tool=tool)
    for extra in (
        briefing.mid_turn(store, me, thread.deliver_directed(store, me)),
        _undeliverable(store, me),
    ):
        if extra:
            notes.append(extra)
    return Result(context="\n\n".join(notes) if notes else None)


def stop(store: Store, payload: dict[str, Any], agent: str) -> Result:
    ensure_session(store, payload, agent)
    return NOTHING


def session_end(store: Store, payload: dict[str, Any], agent: str) -> Result:
    sid = text(payload, "session_id")
    if sid and store.get_session(sid) is not None:
        thread.end_session(store, sid)
    return NOTHING


HANDLERS = {
    "session-start": session_start,
    "user-prompt-submit": user_prompt_submit,
    "pre-tool-use": pre_tool_use,
    "post-tool-use": post_tool_use,
    "stop": stop,
    "session-end": session_end,
}

EVENT_NAMES = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "pre-tool-use": "PreToolUse",
    "post-tool-use": "PostToolUse",
    "stop": "Stop",
    "session-end": "SessionEnd",
}
