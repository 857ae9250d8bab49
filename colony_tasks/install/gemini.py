"""Gemini CLI and Qwen Code: the hook block and the MCP server entry of their ``settings.json``.

Qwen Code is a fork of Gemini CLI and keeps its settings layout: one ``settings.json`` per scope
holds ``hooks`` (Claude Code's nesting: event → matcher groups → handlers) and ``mcpServers``.
What differs is named per client (:class:`Client`):

- the folder: ``~/.gemini`` (``$GEMINI_CLI_HOME`` stands for the home) or ``~/.qwen``
  (``$QWEN_HOME`` is that folder itself), and ``.gemini/`` or ``.qwen/`` at the repository root;
- the event names (Gemini's BeforeAgent, BeforeTool, AfterTool, AfterAgent; Qwen's are Claude
  Code's) and the tool names the matchers select, both from
  :data:`colony_tasks.base.agent_events.EVENTS`; a Gemini lifecycle matcher is compared by
  equality, so lifecycle groups carry none (every source);
- the timeout's unit: Gemini counts milliseconds, Qwen seconds (but reads 1000 and more as
  milliseconds: the background wait's day is written so);
- Qwen's Stop also runs the background wait that wakes an idle session (``hook wait``,
  ``"async": true``: :mod:`colony_tasks.hooks.wait`); Gemini runs no background hooks.

Handlers are shell strings (both run hooks through the shell) that pass ``--agent``: their
payloads do not say which client sent them. The MCP server entry is a stdio server without
``env``: both clients pass their own environment on (``COLONY_TASKS_HOME`` included).
"""

from __future__ import annotations

import copy
import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import hookblock
from .files import SERVERS, child_object, remove_entry

SERVER_NAME = "colony-tasks"


@dataclass(frozen=True)
class Client:
    """One client of the Gemini settings layout."""

    agent: str
    label: str
    folder: str  # ".gemini" / ".qwen", in the home and at the repository root
    timeout_scale: int  # our timeouts are seconds; Gemini wants milliseconds

    def user_dir(self) -> Path:
        if self.agent == "gemini":
            home = os.environ.get("GEMINI_CLI_HOME")
            return Path(home).expanduser() / self.folder if home else Path.home() / self.folder
        configured = os.environ.get("QWEN_HOME")
        return Path(configured).expanduser() if configured else Path.home() / self.folder

    def settings_path(self, scope: str, root: Path | None) -> Path:
        if scope == "project":
            assert root is not None
            return root / self.folder / "settings.json"
        return self.user_dir() / "settings.json"

    def present(self) -> bool:
        """Whether the client has run here (it creates its user folder on its first run)."""
        return self.user_dir().is_dir()


GEMINI = Client("gemini", "Gemini CLI", ".gemini", 1000)
QWEN = Client("qwen", "Qwen Code", ".qwen", 1)
CLIENTS = {client.agent: client for client in (GEMINI, QWEN)}


def handler(client: Client, command: str, slug: str, timeout: int) -> dict[str, Any]:
    """``'<command>' hook <slug> --agent <client>`` as a shell string, named for the client's
    hook list."""
    return {
        "type": "command",
        "name": f"colony-tasks {slug}",
        "command": f"{shlex.quote(command)} hook {slug} --agent {client.agent}",
        "timeout": timeout * client.timeout_scale,
    }


def wait_handler(client: Client, command: str) -> dict[str, Any]:
    """Qwen's background Stop handler that wakes an idle session; its timeout in milliseconds
    (Qwen reads a value of 1000 or more so)."""
    found = handler(client, command, hookblock.WAIT_SLUG, hookblock.WAIT_TIMEOUT)
    return {**found, "timeout": hookblock.WAIT_TIMEOUT * 1000, "async": True}


def hooks_block(client: Client, command: str) -> hookblock.Block:
    """Event → our matcher group, for every event colony-tasks listens to in ``client``."""
    waits = client is QWEN
    return {
        event.name_for(client.agent): hookblock.group(
            event.matcher_for(client.agent),
            handler(client, command, event.slug, event.timeout),
            *(
                [wait_handler(client, command)]
                if waits and event.name == hookblock.WAIT_EVENT
                else []
            ),
        )
        for event in hookblock.events_for(client.agent)
    }


def install_hooks(client: Client, data: dict[str, Any], command: str) -> None:
    hookblock.install_block(data, hooks_block(client, command))


def uninstall_hooks(data: dict[str, Any]) -> None:
    hookblock.uninstall_block(data)


def server_entry(command: str) -> dict[str, Any]:
    return {"command": command, "args": ["mcp"]}


def install_mcp(data: dict[str, Any], command: str) -> None:
    """Add or update ``mcpServers.colony-tasks``; a stdio entry keeps the user's extra keys
    (``timeout``, ``trust``, ``env``...), anything else under our name is replaced."""
    servers = child_object(data, "mcpServers", SERVERS, create=True)
    assert servers is not None
    current = servers.get(SERVER_NAME)
    wanted = server_entry(command)
    if isinstance(current, dict) and "command" in current and "httpUrl" not in current:
        current.update(wanted)
    else:
        servers[SERVER_NAME] = copy.deepcopy(wanted)


def uninstall_mcp(data: dict[str, Any]) -> None:
    """Remove ``mcpServers.colony-tasks`` (and ``mcpServers`` if that emptied it)."""
    remove_entry(data, "mcpServers", SERVER_NAME, SERVERS)


#: What our Qwen wake needs from the user's Qwen settings (Qwen's defaults; install sets neither).
QWEN_WAKE_NEEDS = (
    '`agents.crossSessionMessaging` on and `agents.crossSessionInbound` unset or "accept"'
    " (Qwen's defaults; colony-tasks changes neither)"
)


def qwen_wake_blocked(settings: dict[str, Any]) -> str | None:
    """The Qwen setting that keeps our wake out of an idle session (messages from the processes
    a session starts turned away or held for review), or None."""
    agents = settings.get("agents")
    if not isinstance(agents, dict):
        return None
    if agents.get("crossSessionMessaging") is False:
        return "agents.crossSessionMessaging is false"
    inbound = agents.get("crossSessionInbound")
    if inbound is not None and inbound != "accept":
        return f"agents.crossSessionInbound is {json.dumps(inbound)}"
    return None
