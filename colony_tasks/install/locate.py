"""Where things are: the console script, the repository root and each agent's config folders."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from .files import InstallError

EXECUTABLE = "colony-tasks"


def find_executable() -> str:
    """Absolute path of the installed ``colony-tasks`` console script.

    The script beside the running interpreter wins (the venv the user installed into), without
    resolving symlinks, so the hook keeps working when the venv's python is a symlink. Otherwise
    the first one on PATH. Never a pyenv shim or ``uv run``: hooks start a process per event.
    """
    beside = Path(sys.executable).parent / EXECUTABLE
    if beside.is_file():
        return str(beside)
    found = shutil.which(EXECUTABLE)
    if found:
        return os.path.abspath(found)
    raise InstallError(
        f"Cannot find the {EXECUTABLE} executable next to {sys.executable} or on PATH. "
        "Install it from the colony-tasks checkout (`pipx install .` or `uv tool install .`), then run again."
    )


def repo_root(start: Path | None = None) -> Path:
    """The closest folder at or above ``start`` (default: cwd) that holds ``.git``."""
    here = (start or Path.cwd()).absolute()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    raise InstallError(
        f"No git repository found at or above {here}. Run this from inside your repository, "
        "or use --scope user."
    )


def claude_config_dir() -> Path:
    """``$CLAUDE_CONFIG_DIR`` or ``~/.claude``: where user settings.json lives."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def claude_state_file() -> Path:
    """The file with user-scope MCP servers: ``~/.claude.json``.

    With ``CLAUDE_CONFIG_DIR`` set, Claude Code keeps it inside that folder instead.
    """
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    if configured:
        return Path(configured).expanduser() / ".claude.json"
    return Path.home() / ".claude.json"


def codex_home() -> Path:
    """``$CODEX_HOME`` or ``~/.codex``."""
    configured = os.environ.get("CODEX_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".codex"
