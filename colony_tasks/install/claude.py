"""Claude Code: the hook block for settings.json and the MCP server entry.

Hooks use exec form (``command`` is the executable, ``args`` the arguments), so no shell parses
the path. User scope writes ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR``) and the
top-level ``mcpServers`` of ``~/.claude.json``; project scope writes ``.claude/settings.json``
and ``.mcp.json`` at the repository root.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from . import hookblock
from .files import SERVERS, ShapeProblem, child_object, remove_entry
from .locate import claude_config_dir, claude_state_file

APPROVALS = "enabledMcpjsonServers"

SERVER_NAME = "colony-tasks"
SETTINGS_SCHEMA_URL = "https://json.schemastore.org/claude-code-settings.json"


def handler(command: str, slug: str, timeout: int) -> dict[str, Any]:
    """One exec-form command handler: ``<command> hook <slug> --agent claude``."""
    return {
        "type": "command",
        "command": command,
        "args": ["hook", slug, "--agent", "claude"],
        "timeout": timeout,
    }


def wait_handler(command: str) -> dict[str, Any]:
    """The background Stop handler that wakes an idle session (``hook wait``)."""
    found = handler(command, hookblock.WAIT_SLUG, hookblock.WAIT_TIMEOUT)
    return {**found, **hookblock.WAIT_FIELDS}


def hooks_block(command: str) -> hookblock.Block:
    """Event → our matcher group, for every event colony-tasks listens to (Stop also runs
    the background wait that wakes an idle session)."""
    return {
        event.name: hookblock.group(
            event.claude_matcher,
            handler(command, event.slug, event.timeout),
            *([wait_handler(command)] if event.name == hookblock.WAIT_EVENT else []),
        )
        for event in hookblock.events_for("claude")
    }


def hooks_object(command: str) -> dict[str, Any]:
    """The ``hooks`` value as it appears in a settings file (event → list of groups)."""
    return {event: [group] for event, group in hooks_block(command).items()}


def server_entry(command: str) -> dict[str, Any]:
    """The stdio MCP server entry (no ``type``: Claude Code reads that as stdio).

    ``env`` forwards ``COLONY_TASKS_HOME`` from Claude Code's environment (empty when unset,
    which means the default folder), so the server opens the same store as the hooks.
    """
    return {
        "command": command,
        "args": ["mcp"],
        "env": {"COLONY_TASKS_HOME": "${COLONY_TASKS_HOME:-}"},
    }


def settings_path(scope: str, root: Path | None) -> Path:
    """settings.json for the scope (``root`` is the repository root for project scope)."""
    if scope == "project":
        assert root is not None
        return root / ".claude" / "settings.json"
    return claude_config_dir() / "settings.json"


def mcp_path(scope: str, root: Path | None) -> Path:
    """``.mcp.json`` at the repository root, or the user's ``~/.claude.json``."""
    if scope == "project":
        assert root is not None
        return root / ".mcp.json"
    return claude_state_file()


def install_hooks(data: dict[str, Any], command: str) -> None:
    """Merge our hooks into a settings object in place."""
    hookblock.install_block(data, hooks_block(command))


def uninstall_hooks(data: dict[str, Any]) -> None:
    """Take our hooks out of a settings object in place."""
    hookblock.uninstall_block(data)


def install_mcp(data: dict[str, Any], command: str) -> None:
    """Add or update ``mcpServers.colony-tasks``.

    An existing stdio entry keeps the keys the user added (``env``, ``timeout``...); only
    ``command`` and ``args`` are set. Anything else under our name is replaced.
    """
    servers = child_object(data, "mcpServers", SERVERS, create=True)
    assert servers is not None
    wanted = server_entry(command)
    current = servers.get(SERVER_NAME)
    if (
        isinstance(current, dict)
        and "url" not in current
        and current.get("type", "stdio") == "stdio"
    ):
        env = current.get("env")
        current.update({key: wanted[key] for key in ("command", "args")})
        if isinstance(env, dict):
            env.setdefault("COLONY_TASKS_HOME", wanted["env"]["COLONY_TASKS_HOME"])
        else:
            current["env"] = copy.deepcopy(wanted["env"])
    else:
        servers[SERVER_NAME] = copy.deepcopy(wanted)


def uninstall_mcp(data: dict[str, Any]) -> None:
    """Remove ``mcpServers.colony-tasks`` (and ``mcpServers`` if that emptied it)."""
    remove_entry(data, "mcpServers", SERVER_NAME, SERVERS)


# --- approval of the project's .mcp.json server -------------------------------------------------
#
# Claude Code starts a project's .mcp.json server only once this machine's user approved it
# (and accepted the folder's workspace trust): without it `claude mcp list` shows "Pending
# approval" and the server never starts. The approval lives in the user-level state file,
# never in the repository, so a committed .mcp.json cannot approve itself.


def approval_path() -> Path:
    return claude_state_file()


def _project(data: dict[str, Any], root: Path, create: bool) -> dict[str, Any] | None:
    projects = child_object(data, "projects", "an object keyed by project folder", create)
    if projects is None:
        return None
    entry = projects.get(str(root))
    if entry is None and create:
        entry = projects[str(root)] = {}
    if entry is not None and not isinstance(entry, dict):
        raise ShapeProblem(f"projects[{str(root)!r}]", "an object", entry)
    return entry


def approve_project(data: dict[str, Any], root: Path) -> None:
    """Add our server to ``projects[<root>].enabledMcpjsonServers``."""
    entry = _project(data, root, create=True)
    assert entry is not None
    approved = entry.setdefault(APPROVALS, [])
    if not isinstance(approved, list):
        raise ShapeProblem(f"projects[{str(root)!r}].{APPROVALS}", "a list of names", approved)
    if SERVER_NAME not in approved:
        approved.append(SERVER_NAME)


def withdraw_approval(data: dict[str, Any], root: Path) -> None:
    """Take our server out of that list (and what that emptied, which install created)."""
    projects = data.get("projects")
    entry = _project(data, root, create=False)
    if entry is None or not isinstance(entry.get(APPROVALS), list):
        return
    entry[APPROVALS] = [name for name in entry[APPROVALS] if name != SERVER_NAME]
    if not entry[APPROVALS]:
        del entry[APPROVALS]
    if not entry and isinstance(projects, dict):
        del projects[str(root)]
        if not projects:
            del data["projects"]


def local_settings_path(root: Path) -> Path:
    """``.claude/settings.local.json``: where Claude Code itself records that the user approved
    a project's ``.mcp.json`` servers (never committed; install does not write it)."""
    return root / ".claude" / "settings.local.json"


def withdraw_local_approval(data: dict[str, Any]) -> None:
    """Take our server out of the approvals Claude Code recorded in settings.local.json."""
    for key in (APPROVALS, "disabledMcpjsonServers"):
        names = data.get(key)
        if isinstance(names, list) and SERVER_NAME in names:
            data[key] = [name for name in names if name != SERVER_NAME]
            if not data[key]:
                del data[key]
