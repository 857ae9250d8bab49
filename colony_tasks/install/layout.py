"""The plugin files at the repository root, generated from the installer's code.

The repository is a Claude Code plugin marketplace (``.claude-plugin/marketplace.json``) and a
Codex one (``.agents/plugins/marketplace.json``), each listing the one plugin at its root:
``.claude-plugin/plugin.json`` and ``.codex-plugin/plugin.json``, one shared
``hooks/hooks.json``, and the MCP server in ``.mcp.json`` (Claude Code) and
``.codex-plugin/mcp.json`` (Codex). Their commands run ``bin/colony-tasks``, which builds
the plugin's own Python environment under the plugin's data folder on first use and then execs
its console script (and passes ``--agent``: Codex sets ``PLUGIN_ROOT``, Claude Code does not).

``python -m colony_tasks.install.layout [ROOT]`` writes them; ``--check`` only reports files
that differ (exit 1). A test asserts the committed files equal :func:`generated_files`, so the
plugin and the installer never drift apart. The same goes for the routes of Gemini CLI, Qwen Code
and Copilot CLI (:mod:`.client_plugins`). ``settings.example.json`` (a block to paste into a
settings file by hand) runs ``colony-tasks`` from PATH.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import __version__
from . import claude, client_plugins, codex, hookblock

PATH_COMMAND = "colony-tasks"
#: The plugin's launcher (bin/ is also on the Bash tool's PATH while the plugin is enabled).
PLUGIN_COMMAND = "${CLAUDE_PLUGIN_ROOT}/bin/colony-tasks"
MARKETPLACE = "colony-tasks"
#: The first SessionStart builds the plugin's environment (tens of seconds, once).
FIRST_USE_TIMEOUT = 300
DESCRIPTION = (
    "A shared task thread per repository+branch for Claude Code and Codex sessions: "
    "lifecycle hooks and an MCP server over one SQLite store."
)


def plugin_manifest() -> dict[str, Any]:
    """``.claude-plugin/plugin.json``; hooks/hooks.json and .mcp.json are found by convention."""
    return {
        "name": "colony-tasks",
        "version": __version__,
        "description": DESCRIPTION,
        "author": {"name": "colony-tasks maintainers"},
        "license": "Apache-2.0",
        "keywords": ["tasks", "coordination", "hooks", "mcp", "codex"],
    }


def _shared_matcher(event: hookblock.HookEvent) -> str | None:
    """One matcher for both agents: the union of their tool names (each agent only ever
    sends its own)."""
    if event.claude_matcher is None:
        return None
    claude_tools = event.claude_matcher.strip("^$()")
    codex_tools = (event.codex_matcher or "").strip("^$()")
    names = dict.fromkeys([*claude_tools.split("|"), *codex_tools.split("|")])
    return f"^({'|'.join(names)})$"


def plugin_hooks() -> dict[str, Any]:
    """``hooks/hooks.json`` for both agents: the installer's events, run by the launcher."""
    hooks: dict[str, Any] = {}
    for event in hookblock.EVENTS:
        timeout = FIRST_USE_TIMEOUT if event.slug == "session-start" else event.timeout
        # Shell form (Codex has no exec form); both agents set CLAUDE_PLUGIN_ROOT.
        handler = {
            "type": "command",
            "command": f'"{PLUGIN_COMMAND}" hook {event.slug}',
            "timeout": timeout,
        }
        group: dict[str, Any] = {"hooks": [handler]}
        if event.name == hookblock.WAIT_EVENT:
            # Claude Code's background wait (Codex skips async handlers).
            group["hooks"].append(
                {
                    "type": "command",
                    "command": f'"{PLUGIN_COMMAND}" hook {hookblock.WAIT_SLUG}',
                    "timeout": hookblock.WAIT_TIMEOUT,
                    **hookblock.WAIT_FIELDS,
                }
            )
        matcher = _shared_matcher(event)
        if matcher:
            group = {"matcher": matcher, **group}
        hooks[event.name] = [group]
    # No top-level "description": Codex's hooks.json allows only "hooks".
    return {"hooks": hooks}


def plugin_mcp() -> dict[str, Any]:
    """``.mcp.json``: the colony-tasks MCP server over stdio, through the launcher."""
    return {"mcpServers": {claude.SERVER_NAME: claude.server_entry(PLUGIN_COMMAND)}}


def codex_plugin_mcp() -> dict[str, Any]:
    """``.codex-plugin/mcp.json``: the same server for Codex, which expands no ``${...}`` in a
    plugin's MCP file but resolves a relative ``cwd`` against the plugin's folder: the server
    runs the launcher from there (``sh``, so it needs no executable bit after a copy).

    ``env_vars`` forwards what config.toml's entry does (:data:`codex.FORWARDED_ENV`);
    the first session's server may wait for the first-use build, hence the long start timeout.
    """
    return {
        "mcpServers": {
            codex.SERVER_NAME: {
                "command": "sh",
                "args": ["./bin/colony-tasks", "mcp"],
                "cwd": ".",
                "env_vars": list(codex.FORWARDED_ENV),
                "startup_timeout_sec": FIRST_USE_TIMEOUT,
            }
        }
    }


def claude_marketplace() -> dict[str, Any]:
    """``.claude-plugin/marketplace.json``: this repository as a marketplace of one plugin."""
    return {
        "name": MARKETPLACE,
        "description": "colony-tasks for Claude Code: hooks and an MCP server in one plugin.",
        "owner": {"name": "colony-tasks maintainers"},
        "plugins": [{"name": "colony-tasks", "source": "./", "description": DESCRIPTION}],
    }


def codex_manifest() -> dict[str, Any]:
    """``.codex-plugin/plugin.json``; hooks come from the default ``hooks/hooks.json``."""
    return {
        "name": "colony-tasks",
        "version": __version__,
        "description": DESCRIPTION,
        "author": {"name": "colony-tasks maintainers"},
        "license": "Apache-2.0",
        "keywords": ["tasks", "coordination", "hooks", "mcp"],
        "mcpServers": "./.codex-plugin/mcp.json",
        "interface": {
            "displayName": "colony-tasks",
            "shortDescription": "A shared task thread for the agents on one repository.",
            "longDescription": DESCRIPTION,
            "developerName": "colony-tasks maintainers",
            "category": "Coding",
            "capabilities": ["hooks", "mcp"],
            "defaultPrompt": "Who else is working on this repository, and on what?",
        },
    }


def codex_marketplace() -> dict[str, Any]:
    """``.agents/plugins/marketplace.json``: the Codex marketplace of the same plugin."""
    return {
        "name": MARKETPLACE,
        "interface": {"displayName": "colony-tasks"},
        "plugins": [
            {
                "name": "colony-tasks",
                "source": {"source": "local", "path": "./"},
                "policy": {"installation": "AVAILABLE"},
                "category": "Coding",
            }
        ],
    }


def settings_example() -> dict[str, Any]:
    """``settings.example.json``: the block to paste into ~/.claude/settings.json by hand."""
    return {"$schema": claude.SETTINGS_SCHEMA_URL, "hooks": claude.hooks_object(PATH_COMMAND)}


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def generated_files() -> dict[str, str]:
    """Relative path → exact file content."""
    return {
        ".claude-plugin/plugin.json": _dumps(plugin_manifest()),
        ".claude-plugin/marketplace.json": _dumps(claude_marketplace()),
        ".codex-plugin/plugin.json": _dumps(codex_manifest()),
        ".codex-plugin/mcp.json": _dumps(codex_plugin_mcp()),
        ".agents/plugins/marketplace.json": _dumps(codex_marketplace()),
        "hooks/hooks.json": _dumps(plugin_hooks()),
        ".mcp.json": _dumps(plugin_mcp()),
        "settings.example.json": _dumps(settings_example()),
        **{path: _dumps(data) for path, data in client_plugins.files().items()},
    }


def drifted(root: Path) -> list[str]:
    """Relative paths under ``root`` whose content differs from the generated one."""
    stale = []
    for relative, text in generated_files().items():
        path = root / relative
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(relative)
    return stale


def write(root: Path) -> list[str]:
    """Write the files that differ; returns their relative paths."""
    stale = drifted(root)
    files = generated_files()
    for relative in stale:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files[relative], encoding="utf-8")
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m colony_tasks.install.layout", description=__doc__.splitlines()[0]
    )
    parser.add_argument("root", nargs="?", default=".", help="repository root (default: .)")
    parser.add_argument("--check", action="store_true", help="only report files that differ")
    options = parser.parse_args(argv)
    root = Path(options.root)
    if options.check:
        stale = drifted(root)
        for relative in stale:
            print(f"out of date: {relative}")
        return 1 if stale else 0
    for relative in write(root):
        print(f"wrote {relative}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
