"""One handler per hook event: parse the payload, call the core's use case, return its result.

Every decision is in :mod:`colony_tasks.events`; these only translate the agent's payload.
"""

from __future__ import annotations

from .. import events
from ..events import Event, Result
from ..procs import agent_pid
from ..store import Store
from .payload import text, tool_use

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def event_of(
    payload: dict[str, Any], agent: str, pid: int | None = None, *, cheap: bool = True
) -> Event:
    """The event; ``pid`` is the agent's process when the hook ran elsewhere (team mode's
    relay applies events that hook processes spooled), else this process's agent;
    ``cheap=False`` where the session's owner is established or checked (SessionStart,
    SessionEnd), which may cost a ``ps`` call off Linux."""
    agent_process = pid or agent_pid(cheap=cheap)
    return Event(text(payload, "session_id"), agent, text(payload, "cwd"), agent_process)


def session_start(
    store: Store, payload: dict[str, Any], agent: str, pid: int | None = None
) -> Result:
    return events.session_start(store, event_of(payload, agent, pid, cheap=False))


def user_prompt_submit(
    store: Store, payload: dict[str, Any], agent: str, pid: int | None = None
) -> Result:
    return events.prompt(store, event_of(payload, agent, pid), text(payload, "prompt"))


def acts(event: str, payload: dict[str, Any]) -> bool:
    """Whether the event needs the store at all: PreToolUse only checks edits and notes the
    files a shell command may change (the store is not even opened, nor the event
    fingerprinted, for any other tool)."""
    return event != "pre-tool-use" or events.checks_before(tool_use(payload))


def pre_tool_use(
    store: Store, payload: dict[str, Any], agent: str, pid: int | None = None
) -> Result:
    return events.before_tool(store, event_of(payload, agent, pid), tool_use(payload))


def post_tool_use(
    store: Store, payload: dict[str, Any], agent: str, pid: int | None = None
) -> Result:
    return events.after_tool(store, event_of(payload, agent, pid), tool_use(payload))


def stop(store: Store, payload: dict[str, Any], agent: str, pid: int | None = None) -> Result:
    return events.stop(store, event_of(payload, agent, pid))


def session_end(
    store: Store, payload: dict[str, Any], agent: str, pid: int | None = None
) -> Result:
    return events.session_end(store, event_of(payload, agent, pid, cheap=False))


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
