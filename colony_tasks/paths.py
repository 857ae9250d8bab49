"""Where colony-tasks keeps its files: one user-level folder, never the user's repository.

Everything lives under ``COLONY_TASKS_HOME`` (default ``~/.colony-tasks``): the database
``colony.db``, the hook log ``hooks.log`` and ``settings.json``. The folder is created 0700
and every file in it 0600, whatever the process umask.
Standard library only: the hook path imports this module.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

DB_NAME = "colony.db"
LOG_NAME = "hooks.log"
SETTINGS_NAME = "settings.json"
LOG_MAX_BYTES = 1_000_000


def home() -> Path:
    """The data folder (not created)."""
    configured = os.environ.get("COLONY_TASKS_HOME")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".colony-tasks"


def ensure_home() -> Path:
    """Create the data folder 0700 if missing and return it."""
    folder = home()
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
    return folder


def db_path() -> Path:
    return home() / DB_NAME


def log_path() -> Path:
    return home() / LOG_NAME


def settings_path() -> Path:
    return home() / SETTINGS_NAME


def touch_private(path: Path) -> None:
    """Create ``path`` 0600 if it does not exist (independent of the umask)."""
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
    os.close(fd)
    os.chmod(path, 0o600)


def fallback_log_path() -> Path:
    """Where the log goes when the data folder cannot be written (e.g. a read-only home)."""
    return Path(tempfile.gettempdir()) / f"colony-tasks-{os.getuid()}.log"


def _append(path: Path, line: bytes) -> None:
    try:
        if path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def log(message: str) -> None:
    """Append one line to the hook log (rotated past ``LOG_MAX_BYTES``); never raises."""
    line = (time.strftime("%Y-%m-%dT%H:%M:%S") + " " + message.replace("\n", " | ") + "\n").encode(
        "utf-8", "replace"
    )
    try:
        _append(ensure_home() / LOG_NAME, line)
    except Exception:
        try:
            _append(fallback_log_path(), line)
        except Exception:
            pass
