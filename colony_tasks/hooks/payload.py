"""Reading hook payloads: which agent sent it, which tool it ran and on which files."""

from __future__ import annotations

from ..events import ToolUse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CLAUDE_WRITE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
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
    return ToolUse(name, "other")
