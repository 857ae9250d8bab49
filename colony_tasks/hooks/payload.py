"""Reading hook payloads: which agent sent one, which tool it ran and on which files, turned
into the request a relay applies (the core's plain event values; see
:mod:`colony_tasks.relay.apply`). No rule lives here: every decision is the core's.

Standard library only, and no import of the core: a hook client that reaches its relay loads
nothing else of colony-tasks.
"""

from __future__ import annotations

import time

from ..base.agent_events import AGENT_EVENTS, CLAUDE, EDIT, EVENTS, OTHER, READ, SHELL, tools_of
from ..base.procs import agent_pid
from ..relay.wire import EventRequest, ToolCall, event_key

# The hook client imports no `typing` (~1.5 ms of every hook): see TYPE_CHECKING in docs/relay.md.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


# Deeper than this, a payload's values are dropped (read as null): nothing a hook reads is
# nested that deep, and json's parser recurses (RecursionError near 1,000 levels).
MAX_DEPTH = 64
_TOKEN: list[Any] = []


def loads(text: str) -> Any:
    """The JSON value of ``text``; one nested past the parser's recursion limit is read with
    its values below :data:`MAX_DEPTH` levels dropped (50,000 nested objects beside a real
    Edit must not lose the edit). Linear: one scan, in C between brackets and strings."""
    import json

    try:
        return json.loads(text)
    except RecursionError:
        return json.loads(shallow(text))


def shallow(text: str, limit: int = MAX_DEPTH) -> str:
    """``text`` (JSON) with every array or object nested deeper than ``limit`` replaced by
    ``null``. Strings are skipped whole, so brackets inside them do not count."""
    if not _TOKEN:
        import re

        _TOKEN.append(re.compile(r'"(?:[^"\\]|\\.)*+"|[\[\]{}]'))
    pieces: list[str] = []
    depth = 0
    cut = -1
    kept = 0
    for match in _TOKEN[0].finditer(text):
        token = match.group()
        if token in ("[", "{"):
            if depth == limit and cut < 0:
                cut = match.start()
            depth += 1
        elif token in ("]", "}"):
            depth -= 1
            if depth == limit and cut >= 0:
                pieces.append(text[kept:cut])
                pieces.append("null")
                kept = match.end()
                cut = -1
    pieces.append(text[kept:])
    return "".join(pieces)


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


def tool_paths(tool_name: str, tool_input: Any, agent: str = CLAUDE) -> list[str]:
    """The files a write tool of ``agent`` is about to change (or changed)."""
    tools = tools_of(agent)
    if not isinstance(tool_input, dict):
        return []
    if tool_name in tools.patch:
        return patch_paths(
            tool_input.get("command", tool_input.get("patch", tool_input.get("input")))
        )
    if tool_name in tools.edit:
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


# What an edit says it will write is sent up to this size (a larger one is weighed after it).
MAX_EDITS_CHARS = 1024 * 1024


def tool_edits(tool_name: str, tool_input: Any, agent: str = CLAUDE) -> list[list[str]]:
    """What a write tool says it will write, ``[kind, path, old, new]`` each, as the core reads
    it (:func:`colony_tasks.domain.regions.edits_by_path`): a replacing tool's strings (Edit,
    MultiEdit, Gemini's ``replace``, Qwen's ``edit``), a written file's content (Write,
    ``write_file``), a patch's body, a notebook edit as the whole file. Only copied, never
    parsed here."""
    tools = tools_of(agent)
    if not isinstance(tool_input, dict):
        return []
    if tool_name in tools.patch:
        body = tool_input.get("command", tool_input.get("patch", tool_input.get("input")))
        if isinstance(body, list):
            body = "\n".join(p for p in body if isinstance(p, str))
        return [["patch", "", "", body]] if isinstance(body, str) else []
    path = next((p for p in tool_paths(tool_name, tool_input, agent)), "")
    if tool_name in tools.writes:
        return [["write", path, "", text(tool_input, "content")]]
    if tool_name in tools.replaces:
        items = tool_input.get("edits") if tool_name == "MultiEdit" else [tool_input]
        found = []
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict):
                every = item.get("replace_all") is True or item.get("allow_multiple") is True
                kind = "replace_all" if every else "replace"
                found.append([kind, path, text(item, "old_string"), text(item, "new_string")])
        return found
    return [["whole", path, "", ""]] if path else []


def tool_use(payload: dict[str, Any], edits: bool = False, agent: str = CLAUDE) -> ToolCall:
    """The payload's tool call in the core's terms: what it does (edit, read, shell or other)
    and the files it names, by ``agent``'s tool names; ``edits``: with what an edit says it
    will write (a PreToolUse's)."""
    tools = tools_of(agent)
    name = text(payload, "tool_name")
    label = text(payload, "tool_label") or name  # the agent's own name (hooks.dialects)
    tool_input = payload.get("tool_input")
    use_id = text(payload, "tool_use_id")
    if name in tools.edit or name in tools.patch:
        said = tool_edits(name, tool_input, agent) if edits else []
        if sum(len(x) for e in said for x in e) > MAX_EDITS_CHARS:
            said = []
        return ToolCall(label, EDIT, tool_paths(name, tool_input, agent), "", use_id, said)
    if name in tools.shell:
        return ToolCall(label, SHELL, [], shell_command(tool_input), use_id)
    if name in tools.read and isinstance(tool_input, dict):
        path = tool_input.get("file_path")
        return ToolCall(label, READ, [path] if isinstance(path, str) and path else [], "", use_id)
    return ToolCall(label, OTHER, [], "", use_id)


def subagent(payload: dict[str, Any]) -> str:
    """``Explore a1b2c3d4``: the subagent a payload comes from (``agent_type`` and the start
    of ``agent_id``, which both agents send inside a subagent), '' outside one."""
    kind, ident = text(payload, "agent_type"), text(payload, "agent_id")
    if not ident:
        return ""  # agent_type alone: Claude Code run with --agent, the session itself
    return f"{kind or 'subagent'} {ident[:8]}"


def request(event: str, agent: str, payload: dict[str, Any], raw: bytes) -> EventRequest:
    """The relay request for one event: the event's values (the fields its row in
    :data:`colony_tasks.base.agent_events.EVENTS` names), its idempotency key and when it was
    sent. An event that establishes or checks who owns the session (the row's ``owner``) finds
    the exact agent process (which may cost a ``ps`` call off Linux). A subagent's events carry
    its name; SubagentStart is its parent's event (the subagent has no session)."""
    row = EVENTS[event]
    fields: dict[str, str | bool] = {}
    keys = row.keys.get(agent, {})
    for name, key, default in row.fields:
        key = keys.get(name, key)
        if default is False:
            fields[name] = payload.get(key) is True
        else:
            fields[name] = text(payload, key) or default
    return EventRequest(
        event,
        agent,
        session=text(payload, "session_id"),
        cwd=text(payload, "cwd"),
        pid=agent_pid(cheap=not row.owner),
        subagent="" if event == "subagent-start" else subagent(payload),
        key=event_key(event, raw),
        at=time.time(),
        tool=tool_use(payload, edits=event == "pre-tool-use", agent=agent) if row.tool else None,
        fields=fields,
    )


EVENT_NAMES = AGENT_EVENTS  # our event name -> the agents' (colony_tasks.base.agent_events)
