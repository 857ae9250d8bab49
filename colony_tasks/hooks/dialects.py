"""The payload dialects of the agents beyond Claude Code and Codex, read as Claude's.

Every adapter turns one agent's payload into the Claude-shaped object :mod:`.payload` reads
(``session_id``, ``cwd``, ``tool_name`` with Claude's tool names, ``tool_input`` with Claude's
argument names), keeping the agent's own tool name as ``tool_label`` for the timeline. No rule
lives here; the core sees the same events whichever agent sent them.

- **GitHub Copilot CLI**, native hook files (camelCase events): ``sessionId``, ``toolName``
  (``create``, ``edit``, ``bash``, ``view``), ``toolArgs`` (an object: ``path``,
  ``file_text``, ``old_str``, ``new_str``, ``command``). Copilot also runs the hooks of
  ``.claude/settings.json`` with a Claude-like dialect (Claude's tool names, Copilot's
  argument names) and puts ``COPILOT_CLI=1`` in the hook's environment: see
  :func:`copilot_claude_hook`.
- **OpenCode**, our generated plugin (:mod:`colony_tasks.install.opencode`): Claude's keys
  already, with OpenCode's tool names (``write``, ``edit``, ``bash``, ``read``) and argument
  names (``filePath``, ``oldString``, ``newString``).

Standard library only: the hook client reads it on every event of these agents.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

#: Each agent's tool names -> Claude's (what :mod:`colony_tasks.base.agent_events` classifies).
TOOLS = {
    "copilot": {"create": "Write", "edit": "Edit", "bash": "Bash", "view": "Read"},
    "opencode": {
        "write": "Write",
        "edit": "Edit",
        "bash": "Bash",
        "read": "Read",
        "patch": "apply_patch",
        "apply_patch": "apply_patch",
    },
}

#: Argument names -> Claude's (Copilot's in both its dialects, OpenCode's).
ARGUMENTS = {
    "path": "file_path",
    "file_text": "content",
    "old_str": "old_string",
    "new_str": "new_string",
    "filePath": "file_path",
    "oldString": "old_string",
    "newString": "new_string",
    "replaceAll": "replace_all",
    "patchText": "patch",
}

#: Copilot's camelCase payload keys -> Claude's.
COPILOT_KEYS = {
    "sessionId": "session_id",
    "toolName": "tool_name",
    "toolArgs": "tool_input",
    "toolResult": "tool_response",
    "initialPrompt": "initial_prompt",
    "transcriptPath": "transcript_path",
    "stopReason": "stop_reason",
    "agentId": "agent_id",
    "agentType": "agent_type",
}

#: Where colony-tasks' own Copilot hook file is (user scope, then project scope).
COPILOT_HOOK_FILE = "colony-tasks.json"


def claude_input(tool_input: Any) -> Any:
    """``tool_input`` with its argument names in Claude's terms (the others kept)."""
    if not isinstance(tool_input, dict):
        return tool_input
    return {ARGUMENTS.get(key, key): value for key, value in tool_input.items()}


def claude_tool(agent: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with Claude's tool and argument names; the agent's tool name kept as
    ``tool_label``."""
    name = payload.get("tool_name")
    if not isinstance(name, str):
        return payload
    table = TOOLS.get(agent, {})
    return {
        **payload,
        "tool_label": name,
        "tool_name": table.get(name, name),
        "tool_input": claude_input(payload.get("tool_input")),
    }


def from_copilot(payload: dict[str, Any]) -> dict[str, Any]:
    """A native (camelCase) Copilot payload as Claude's. ``toolArgs`` may be a JSON string
    in older releases; it is read as the object it holds.

    Copilot runs a subagent as a session of its own: the hooks inside it carry the
    subagent's ``sessionId`` (its ``agentId`` too) and its parent's as ``parentAgentId``
    (1.0.102). They are read as Claude Code's subagent hooks are: the parent's session,
    naming the subagent (``agent_id``, ``agent_type``). Its lifecycle hooks (subagentStart,
    subagentStop) already carry the parent's ``sessionId``."""
    found = {COPILOT_KEYS.get(key, key): value for key, value in payload.items()}
    parent = found.get("parentAgentId")
    if isinstance(parent, str) and parent and found.get("session_id") != parent:
        found["session_id"] = parent
    args = found.get("tool_input")
    if isinstance(args, str):
        import json

        try:
            found["tool_input"] = json.loads(args)
        except ValueError:
            found["tool_input"] = {}
    return claude_tool("copilot", found)


def from_copilot_claude(payload: dict[str, Any]) -> dict[str, Any]:
    """Copilot's Claude-like dialect (``.claude/settings.json`` hooks, PascalCase events):
    Claude's tool names already, Copilot's argument names."""
    return {**payload, "tool_input": claude_input(payload.get("tool_input"))}


def copilot_hook_files(environ: Mapping[str, str], cwd: str) -> list[str]:
    """Where a native Copilot install of colony-tasks would be, for this hook's session."""
    home = environ.get("COPILOT_HOME") or os.path.join(os.path.expanduser("~"), ".copilot")
    project = environ.get("COPILOT_PROJECT_DIR") or cwd
    found = [os.path.join(home, "hooks", COPILOT_HOOK_FILE)]
    if project:
        found.append(os.path.join(project, ".github", "hooks", COPILOT_HOOK_FILE))
    return found


def copilot_claude_hook(environ: Mapping[str, str]) -> bool:
    """True when a hook installed for Claude Code runs inside Copilot CLI (which reads
    ``.claude/settings.json`` and sets ``COPILOT_CLI=1`` for its hooks)."""
    return environ.get("COPILOT_CLI") == "1"


def native_copilot_installed(environ: Mapping[str, str], cwd: str) -> bool:
    """A native Copilot hook file of ours is there: it handles this session's events, so the
    Claude-dialect copy of each event is skipped (one Copilot session stays one session)."""
    return any(os.path.isfile(path) for path in copilot_hook_files(environ, cwd))


def adapt(
    agent: str, payload: dict[str, Any], environ: Mapping[str, str]
) -> tuple[str, dict[str, Any]] | None:
    """``(agent, payload)`` in Claude's terms, or None when this hook must do nothing (the
    Claude-dialect copy of an event a native Copilot hook of ours also receives)."""
    if agent == "copilot":
        if "sessionId" in payload or "toolName" in payload:
            return agent, from_copilot(payload)
        return agent, from_copilot_claude(payload)
    if agent == "opencode":
        return agent, claude_tool(agent, payload)
    if agent == "claude" and copilot_claude_hook(environ):
        cwd = payload.get("cwd")
        if native_copilot_installed(environ, cwd if isinstance(cwd, str) else ""):
            return None
        return "copilot", from_copilot_claude(payload)
    return agent, payload
