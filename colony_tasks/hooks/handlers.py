"""Reading hook payloads (which agent sent one, which tool it ran and on which files) and one
handler per hook event: parse the payload, call the core's use case, return its result.

Every decision is in :mod:`colony_tasks.events`; these only translate the agent's payload.
"""

from __future__ import annotations

from .. import events
from ..events import Event, Result, ToolUse
from ..procs import agent_pid
from ..store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CLAUDE_WRITE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
CLAUDE_READ_TOOLS = frozenset({"Read"})
CODEX_PATCH_TOOLS = frozenset({"apply_patch"})
WRITE_TOOLS = CLAUDE_WRITE_TOOLS | CODEX_PATCH_TOOLS
SHELL_TOOLS = frozenset({"Bash", "PowerShell", "shell", "exec_command"})
PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


def text(payload: dict[str, Any], key: str) -> str:
    value = payload.get(key)
    return value if isinstance(value, str) else ""


def detect_agent(payload: dict[str, Any], event: str) -> str:
    """``codex`` or ``claude`` from the payload's shape, when no --agent was given."""
    if "turn_id" in payload:
        return "codex"
    transcript = text(payload, "transcript_path").replace("\\", "/")
    if "/.codex/" in transcript:
        return "codex"
    if "/.claude/" in transcript:
        return "claude"
    if "model" in payload and (event != "session-start" or "permission_mode" in payload):
        return "codex"  # Claude sends `model` only on SessionStart, without permission_mode
    if "transcript_path" in payload and payload["transcript_path"] is None:
        return "codex"  # Codex's transcript_path is nullable; Claude's is always a path
    return "claude"


def patch_paths(patch: Any) -> list[str]:
    """Files named by an ``apply_patch`` body (Add/Update/Delete File and Move to)."""
    if isinstance(patch, list):
        patch = "\n".join(p for p in patch if isinstance(p, str))
    if not isinstance(patch, str):
        return []
    found = []
    for line in patch.splitlines():
        line = line.strip()
        for header in PATCH_HEADERS:
            if line.startswith(header):
                name = line[len(header) :].strip()
                if name:
                    found.append(name)
                break
    return list(dict.fromkeys(found))


def tool_paths(tool_name: str, tool_input: Any) -> list[str]:
    """The files a write tool is about to change (or changed)."""
    if not isinstance(tool_input, dict):
        return []
    if tool_name in CODEX_PATCH_TOOLS:
        return patch_paths(
            tool_input.get("command", tool_input.get("patch", tool_input.get("input")))
        )
    if tool_name in CLAUDE_WRITE_TOOLS:
        found = []
        for key in ("file_path", "notebook_path", "path"):
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                found.append(value)
        return found[:1]
    return []


def shell_command(tool_input: Any) -> str:
    if not isinstance(tool_input, dict):
        return ""
    command = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(command, list):
        return " ".join(str(c) for c in command)
    return command if isinstance(command, str) else ""


def tool_use(payload: dict[str, Any]) -> ToolUse:
    """The payload's tool call in the core's terms (edit, shell or other)."""
    name = text(payload, "tool_name")
    tool_input = payload.get("tool_input")
    if name in WRITE_TOOLS:
        return ToolUse(name, "edit", tuple(tool_paths(name, tool_input)))
    if name in SHELL_TOOLS:
        return ToolUse(name, "shell", (), shell_command(tool_input), text(payload, "tool_use_id"))
    if name in CLAUDE_READ_TOOLS and isinstance(tool_input, dict):
        path = tool_input.get("file_path")
        return ToolUse(name, "read", (path,) if isinstance(path, str) and path else ())
    return ToolUse(name, "other")


def event_of(
    payload: dict[str, Any], agent: str, pid: int | None = None, *, cheap: bool = True
) -> Event:
    """The event; ``pid`` is the agent's process when the hook ran elsewhere (team mode's
    relay applies events that hook processes spooled), else this process's agent;
    ``cheap=False`` where the session's owner is established or checked (SessionStart,
    SessionEnd), which may cost a ``ps`` call off Linux."""
    agent_process = pid or agent_pid(cheap=cheap)
    return Event(
        text(payload, "session_id"), agent, text(payload, "cwd"), agent_process, subagent(payload)
    )


def subagent(payload: dict[str, Any]) -> str:
    """``Explore a1b2c3d4``: the subagent a payload comes from (``agent_type`` and the start
    of ``agent_id``, which both agents send inside a subagent), '' outside one."""
    kind, ident = text(payload, "agent_type"), text(payload, "agent_id")
    if not ident:
        return ""  # agent_type alone: Claude Code run with --agent, the session itself
    return f"{kind or 'subagent'} {ident[:8]}"


def session_start(
    store: Store, payload: dict[str, Any], agent: str, pid: int | None = None
) -> Result:
    return events.session_start(
        store, event_of(payload, agent, pid, cheap=False), text(payload, "source") or "startup"
    )


def subagent_start(
    store: Store, payload: dict[str, Any], agent: str, pid: int | None = None
) -> Result:
    # The subagent's event is its parent's: no subagent on the Event itself.
    parent = event_of(payload, agent, pid)._replace(subagent="")
    return events.subagent_start(store, parent, text(payload, "agent_type"))


def user_prompt_submit(
    store: Store, payload: dict[str, Any], agent: str, pid: int | None = None
) -> Result:
    return events.prompt(store, event_of(payload, agent, pid), text(payload, "prompt"))


def fingerprinted(event: str, payload: dict[str, Any]) -> bool:
    """Whether the hook fingerprints the payload first (:func:`.events.fingerprinted`)."""
    return events.fingerprinted(event, tool_use(payload) if event == "pre-tool-use" else None)


def acts(event: str, payload: dict[str, Any]) -> bool:
    """Whether the event needs the store at all: PreToolUse only checks edits and notes the
    files a shell command may change (the store is not even opened, nor the event
    fingerprinted, for any other tool)."""
    if event == "notification":
        return events.waits_on_human(text(payload, "notification_type"))
    return event != "pre-tool-use" or events.checks_before(tool_use(payload))


def pre_tool_use(
    store: Store, payload: dict[str, Any], agent: str, pid: int | None = None
) -> Result:
    return events.before_tool(store, event_of(payload, agent, pid), tool_use(payload))


def post_tool_use(
    store: Store, payload: dict[str, Any], agent: str, pid: int | None = None
) -> Result:
    return events.after_tool(store, event_of(payload, agent, pid), tool_use(payload))


def post_tool_use_failure(
    store: Store, payload: dict[str, Any], agent: str, pid: int | None = None
) -> Result:
    return events.after_tool(store, event_of(payload, agent, pid), tool_use(payload), failed=True)


def stop_failure(
    store: Store, payload: dict[str, Any], agent: str, pid: int | None = None
) -> Result:
    return events.stop_failure(store, event_of(payload, agent, pid), text(payload, "error"))


def notification(
    store: Store, payload: dict[str, Any], agent: str, pid: int | None = None
) -> Result:
    return events.notification(
        store, event_of(payload, agent, pid), text(payload, "notification_type")
    )


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
    "post-tool-use-failure": post_tool_use_failure,
    "subagent-start": subagent_start,
    "stop": stop,
    "stop-failure": stop_failure,
    "notification": notification,
    "session-end": session_end,
}

EVENT_NAMES = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "pre-tool-use": "PreToolUse",
    "post-tool-use": "PostToolUse",
    "post-tool-use-failure": "PostToolUseFailure",
    "subagent-start": "SubagentStart",
    "stop": "Stop",
    "stop-failure": "StopFailure",
    "notification": "Notification",
    "session-end": "SessionEnd",
}
