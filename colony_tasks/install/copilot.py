"""GitHub Copilot CLI: our native hook file and the MCP server entry.

Copilot reads every ``*.json`` in ``~/.copilot/hooks/`` (``$COPILOT_HOME``) and, in a trusted
folder, ``.github/hooks/``: ours is ``colony-tasks.json`` there, in Copilot's own format
(``{"version": 1, "hooks": {"preToolUse": [handler, ...]}}``, camelCase events, ``bash``
shell commands, ``timeoutSec``). The MCP server goes into ``~/.copilot/mcp-config.json``
(user) or ``.github/mcp.json`` (project; ``.mcp.json`` stays Claude Code's), as
``copilot mcp add`` writes it.

Copilot denies a tool when its preToolUse hook fails (exits non-zero, or cannot start): each
command ends in ``|| true`` with stderr dropped, so a missing or broken colony-tasks lets
every tool run, as a hook that fails open must.
"""

from __future__ import annotations

import copy
import os
import shlex
from pathlib import Path
from typing import Any

from ..base.agent_events import COPILOT, EVENTS
from .files import SERVERS, ShapeProblem, child_object, remove_entry
from .hookblock import is_our_handler

SERVER_NAME = "colony-tasks"
HOOK_FILE = "colony-tasks.json"
VERSION = 1


def copilot_home() -> Path:
    """``$COPILOT_HOME`` or ``~/.copilot``."""
    configured = os.environ.get("COPILOT_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".copilot"


def handler(command: str, slug: str, timeout: int, *, quoted: bool = False) -> dict[str, Any]:
    """One command handler, failing open whatever happens to the executable; ``quoted``:
    ``command`` is already a shell word (the plugin's, which the shell expands)."""
    word = command if quoted else shlex.quote(command)
    return {
        "type": "command",
        "bash": f"{word} hook {slug} --agent {COPILOT} 2>/dev/null || true",
        "timeoutSec": timeout,
    }


def hooks_object(command: str, *, quoted: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Copilot's event name -> our handler, for every event Copilot has."""
    return {
        row.names[COPILOT]: [handler(command, slug, row.timeout, quoted=quoted)]
        for slug, row in EVENTS.items()
        if COPILOT in row.names
    }


def hooks_path(scope: str, root: Path | None) -> Path:
    if scope == "project":
        assert root is not None
        return root / ".github" / "hooks" / HOOK_FILE
    return copilot_home() / "hooks" / HOOK_FILE


def mcp_path(scope: str, root: Path | None) -> Path:
    if scope == "project":
        assert root is not None
        return root / ".github" / "mcp.json"
    return copilot_home() / "mcp-config.json"


def is_ours(item: Any) -> bool:
    """A Copilot handler of ours (its ``bash`` or ``command`` runs ``colony-tasks hook``)."""
    if not isinstance(item, dict):
        return False
    line = item.get("bash", item.get("command"))
    return isinstance(line, str) and is_our_handler({"command": line})


def _hooks(data: dict[str, Any], create: bool) -> dict[str, Any] | None:
    return child_object(data, "hooks", "an object mapping event names to handlers", create)


def _strip(hooks: dict[str, Any], event: str) -> None:
    handlers = hooks[event]
    if not isinstance(handlers, list):
        return
    kept = [h for h in handlers if not is_ours(h)]
    if len(kept) == len(handlers):
        return
    if kept:
        hooks[event] = kept
    else:
        del hooks[event]


def install_hooks(data: dict[str, Any], command: str) -> None:
    """Our handlers in a Copilot hook file, in place (one per event; old copies replaced)."""
    data.setdefault("version", VERSION)
    hooks = _hooks(data, create=True)
    assert hooks is not None
    wanted = hooks_object(command)
    for event in [e for e in hooks if e not in wanted]:
        _strip(hooks, event)
    for event, ours in wanted.items():
        handlers = hooks.get(event)
        if handlers is None:
            hooks[event] = copy.deepcopy(ours)
            continue
        if not isinstance(handlers, list):
            raise ShapeProblem(f"hooks.{event}", "a list of handlers", handlers)
        if [h for h in handlers if is_ours(h)] == ours:
            continue
        hooks[event] = [*(h for h in handlers if not is_ours(h)), *copy.deepcopy(ours)]


def uninstall_hooks(data: dict[str, Any]) -> None:
    """Our handlers out of a Copilot hook file (and ``version`` when nothing else is left)."""
    hooks = _hooks(data, create=False)
    if not hooks:
        return
    for event in list(hooks):
        _strip(hooks, event)
    if not hooks:
        del data["hooks"]
        if set(data) == {"version"}:
            del data["version"]


def server_entry(command: str) -> dict[str, Any]:
    """The local (stdio) server, as ``copilot mcp add`` writes it."""
    return {"type": "local", "command": command, "args": ["mcp"], "tools": ["*"]}


def install_mcp(data: dict[str, Any], command: str) -> None:
    """``mcpServers.colony-tasks``: a local entry keeps the user's keys (``env``, ``tools``,
    ``timeout``); only ``command`` and ``args`` are set. Anything else under our name is
    replaced."""
    servers = child_object(data, "mcpServers", SERVERS, create=True)
    assert servers is not None
    wanted = server_entry(command)
    current = servers.get(SERVER_NAME)
    if isinstance(current, dict) and current.get("type", "local") in ("local", "stdio"):
        current.update({key: wanted[key] for key in ("command", "args")})
    else:
        servers[SERVER_NAME] = wanted


def uninstall_mcp(data: dict[str, Any]) -> None:
    remove_entry(data, "mcpServers", SERVER_NAME, SERVERS)
