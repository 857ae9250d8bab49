"""The extension/plugin routes of Gemini CLI, Qwen Code and Copilot CLI, generated from the
installer's code.

Each runs the same launcher as the Claude Code and Codex plugins (``bin/colony-tasks``, which
builds the plugin's own Python environment on first use) with the same hooks the installer
writes for that client (:mod:`.gemini`, :mod:`.copilot`), passing ``--agent`` itself: the
launcher leaves an explicit ``--agent`` alone.

- **Qwen Code** reads ``qwen-extension.json`` at the repository root (before any Claude
  manifest): the hooks are inline there, so the repository's ``hooks/hooks.json`` (Claude's and
  Codex's) is never read, and ``${extensionPath}`` is the installed copy of the repository.
- **Gemini CLI** reads its hooks only from ``hooks/hooks.json`` beside ``gemini-extension.json``,
  which at the root is Claude's: its extension is the ``gemini-extension/`` folder, and runs the
  launcher of the folder above it, so it is linked from a clone (``gemini extensions link``),
  not copied.
- **Copilot CLI** reads ``.github/plugin/marketplace.json`` and ``.github/plugin/plugin.json``
  before ``.claude-plugin/``: its plugin is the repository root, with its hooks in Copilot's own
  format and its server in ``.github/plugin/``. It sets ``COPILOT_PLUGIN_ROOT`` for the hooks,
  and fills it in the server's arguments.
"""

from __future__ import annotations

from typing import Any

from .. import __version__
from ..base.agent_events import COPILOT, event_name
from . import copilot, gemini

NAME = "colony-tasks"
DESCRIPTION = (
    "A shared task thread per repository+branch for coding agents: lifecycle hooks and an MCP"
    " server over one SQLite store."
)
#: The first SessionStart builds the plugin's environment (tens of seconds, once).
FIRST_USE_TIMEOUT = 300

GEMINI_DIR = "gemini-extension"
GEMINI_LAUNCHER = "${extensionPath}/../bin/colony-tasks"
QWEN_LAUNCHER = "${extensionPath}/bin/colony-tasks"
COPILOT_DIR = ".github/plugin"
#: Copilot gives its hooks a data folder (``CLAUDE_PLUGIN_DATA``, ``PLUGIN_DATA``) but not its
#: servers: the hooks leave it aside, so both build and run one environment (the launcher's
#: own folder, ``~/.colony-tasks/plugin``).
COPILOT_LAUNCHER = 'CLAUDE_PLUGIN_DATA= PLUGIN_DATA= "${COPILOT_PLUGIN_ROOT}/bin/colony-tasks"'


def _hooks(client: gemini.Client, launcher: str) -> dict[str, Any]:
    """Event → [our group], as ``install --agent <client>`` writes them (SessionStart allowed
    the first-use build)."""
    hooks = {event: [group] for event, group in gemini.hooks_block(client, launcher).items()}
    for group in hooks[event_name("session-start", client.agent)]:
        for handler in group["hooks"]:
            handler["timeout"] = FIRST_USE_TIMEOUT * client.timeout_scale
    return hooks


def gemini_manifest() -> dict[str, Any]:
    """``gemini-extension/gemini-extension.json``: the MCP server; hooks are found by name."""
    return {
        "name": NAME,
        "version": __version__,
        "description": DESCRIPTION,
        "mcpServers": {gemini.SERVER_NAME: gemini.server_entry(GEMINI_LAUNCHER)},
    }


def gemini_hooks() -> dict[str, Any]:
    """``gemini-extension/hooks/hooks.json``: the hooks ``install --agent gemini`` writes."""
    return {"hooks": _hooks(gemini.GEMINI, GEMINI_LAUNCHER)}


def qwen_manifest() -> dict[str, Any]:
    """``qwen-extension.json``: the hooks ``install --agent qwen`` writes, and the server."""
    return {
        "name": NAME,
        "version": __version__,
        "description": DESCRIPTION,
        "mcpServers": {gemini.SERVER_NAME: gemini.server_entry(QWEN_LAUNCHER)},
        "hooks": _hooks(gemini.QWEN, QWEN_LAUNCHER),
    }


def copilot_manifest() -> dict[str, Any]:
    """``.github/plugin/plugin.json`` (paths relative to the plugin's root)."""
    return {
        "name": NAME,
        "version": __version__,
        "description": DESCRIPTION,
        "author": {"name": "colony-tasks maintainers"},
        "license": "Apache-2.0",
        "keywords": ["tasks", "coordination", "hooks", "mcp"],
        "hooks": f"./{COPILOT_DIR}/hooks.json",
        "mcpServers": f"./{COPILOT_DIR}/mcp.json",
    }


def copilot_hooks() -> dict[str, Any]:
    """``.github/plugin/hooks.json``: the hook file ``install --agent copilot`` writes."""
    hooks = copilot.hooks_object(COPILOT_LAUNCHER, quoted=True)
    for handler in hooks[event_name("session-start", COPILOT)]:
        handler["timeoutSec"] = FIRST_USE_TIMEOUT
    return {"version": copilot.VERSION, "hooks": hooks}


def copilot_mcp() -> dict[str, Any]:
    """``.github/plugin/mcp.json``: the server, run by the launcher (``sh``: no executable bit
    needed). Copilot fills in ``${COPILOT_PLUGIN_ROOT}`` here, not the data folder."""
    return {
        "mcpServers": {
            copilot.SERVER_NAME: {
                **copilot.server_entry("sh"),
                "args": ["${COPILOT_PLUGIN_ROOT}/bin/colony-tasks", "mcp"],
            }
        }
    }


def copilot_marketplace() -> dict[str, Any]:
    """``.github/plugin/marketplace.json``: this repository as a marketplace of one plugin."""
    return {
        "name": NAME,
        "description": "colony-tasks for GitHub Copilot CLI: hooks and an MCP server.",
        "owner": {"name": "colony-tasks maintainers"},
        "plugins": [{"name": NAME, "source": "./", "description": DESCRIPTION}],
    }


def files() -> dict[str, dict[str, Any]]:
    """Relative path → content, for :func:`colony_tasks.install.layout.generated_files`."""
    return {
        "qwen-extension.json": qwen_manifest(),
        f"{GEMINI_DIR}/gemini-extension.json": gemini_manifest(),
        f"{GEMINI_DIR}/hooks/hooks.json": gemini_hooks(),
        f"{COPILOT_DIR}/marketplace.json": copilot_marketplace(),
        f"{COPILOT_DIR}/plugin.json": copilot_manifest(),
        f"{COPILOT_DIR}/hooks.json": copilot_hooks(),
        f"{COPILOT_DIR}/mcp.json": copilot_mcp(),
    }
