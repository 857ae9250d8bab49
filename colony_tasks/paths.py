"""Where colony-tasks keeps its files: one user-level folder, never the user's repository.

Everything lives under ``COLONY_TASKS_HOME`` (default ``~/.colony-tasks``): the database
``colony.db``, the hook log ``hooks.log`` and ``settings.json``. The folder is created 0700
and every file in it 0600, whatever the process umask.
Standard library only: the hook path imports this module.
"""

from __future__ import annotations

import os
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


def log(message: str) -> None:
    """Append one line to the hook log; never raises.

    The log is rotated once it passes ``LOG_MAX_BYTES`` (one old copy is kept).
    """
    try:
        folder = ensure_home()
        path = folder / LOG_NAME
        try:
            if path.stat().st_size > LOG_MAX_BYTES:
                os.replace(path, folder / (LOG_NAME + ".1"))
        except FileNotFoundError:
            pass
        line = time.strftime("%Y-%m-%dT%H:%M:%S") + " " + message.replace("\n", " | ") + "\n"
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:
        pass
