"""The Claude Code plugin files at the repository root, generated from the installer's code.

``python -m colony_tasks.install.layout [ROOT]`` writes them; ``--check`` only reports files
that differ (exit 1). A test asserts the committed files equal :func:`generated_files`, so the
plugin and the installer never drift apart. Plugin hooks run ``colony-tasks`` from PATH.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import __version__
from . import claude

PLUGIN_COMMAND = "colony-tasks"
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


def plugin_hooks() -> dict[str, Any]:
    """``hooks/hooks.json``: the same hook block the installer writes, from PATH."""
    return {
        "description": "colony-tasks: session, prompt, file-edit and stop events for the shared "
        "task thread.",
        "hooks": claude.hooks_object(PLUGIN_COMMAND),
    }


def plugin_mcp() -> dict[str, Any]:
    """``.mcp.json``: the colony-tasks MCP server over stdio."""
    return {"mcpServers": {claude.SERVER_NAME: claude.server_entry(PLUGIN_COMMAND)}}


def settings_example() -> dict[str, Any]:
    """``settings.example.json``: the block to paste into ~/.claude/settings.json by hand."""
    return {"$schema": claude.SETTINGS_SCHEMA_URL, "hooks": claude.hooks_object(PLUGIN_COMMAND)}


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def generated_files() -> dict[str, str]:
    """Relative path → exact file content."""
    return {
        ".claude-plugin/plugin.json": _dumps(plugin_manifest()),
        "hooks/hooks.json": _dumps(plugin_hooks()),
        ".mcp.json": _dumps(plugin_mcp()),
        "settings.example.json": _dumps(settings_example()),
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
