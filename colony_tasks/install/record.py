"""Who installed the one thing both scopes share: Codex's ``[mcp_servers.colony-tasks]``.

Codex reads MCP servers only from the user's ``$CODEX_HOME/config.toml``, so user scope and
every project-scope install write the same table. ``$CODEX_HOME/colony-tasks.installs.json``
beside it lists its owners (``user``, ``project:<repo root>``); an uninstall removes the table only
when it was the last owner. Without a record (an install by an older version) uninstall
removes it as it always did.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .locate import codex_home

KEY = "codex_mcp_server"


def path() -> Path:
    return codex_home() / "colony-tasks.installs.json"


def owner(scope: str, root: Path | None) -> str:
    return "user" if scope == "user" else f"project:{root}"


class Owners:
    """The recorded owners (None: no record)."""

    def __init__(self, names: list[str] | None) -> None:
        self.names = None if names is None else set(names)

    def with_(self, name: str) -> set[str]:
        return (self.names or set()) | {name}

    def without(self, name: str) -> set[str]:
        return (self.names or set()) - {name}

    def removable_by(self, name: str) -> bool:
        """Whether uninstalling ``name`` takes the shared table out."""
        if self.names is None:
            return True
        return name in self.names and not self.without(name)


def read() -> Owners:
    try:
        data = json.loads(path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Owners(None)
    names = data.get(KEY) if isinstance(data, dict) else None
    if not isinstance(names, list):
        return Owners(None)
    return Owners([n for n in names if isinstance(n, str)])


def mutate(kept: set[str]) -> Callable[[dict[str, Any]], None]:
    """The record's new content: ``kept`` as its owners (the key dropped when none)."""

    def change(data: dict[str, Any]) -> None:
        if kept:
            data[KEY] = sorted(kept)
        else:
            data.pop(KEY, None)

    return change
