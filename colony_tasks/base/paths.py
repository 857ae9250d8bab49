"""Where colony-tasks keeps its files: one user-level folder, never the user's repository.

Everything lives under ``COLONY_TASKS_HOME`` (default ``~/.colony-tasks``): the database
``colony.db``, the hook log ``hooks.log`` and ``settings.json``. The folder is created 0700
and every file in it 0600, whatever the process umask.

Paths are plain strings built with ``os.path``: the hook path imports this module, and
``pathlib`` plus ``tempfile`` would add ~15 ms to every hook process on the target machine.
"""

from __future__ import annotations

import os
import stat
import time
import zlib

DB_NAME = "colony.db"
LOG_NAME = "hooks.log"
#: The relay's own comings and goings (started, retired, exited); failures go to the hook log.
RELAY_LOG_NAME = "relay.log"
SETTINGS_NAME = "settings.json"
LOG_MAX_BYTES = 1_000_000


def home() -> str:
    """The data folder (not created)."""
    configured = os.environ.get("COLONY_TASKS_HOME")
    if configured:
        return os.path.expanduser(configured)
    return os.path.join(os.path.expanduser("~"), ".colony-tasks")


def ensure_home() -> str:
    """Create the data folder 0700 if missing and return it."""
    folder = home()
    if not os.path.isdir(folder):
        os.makedirs(folder, mode=0o700, exist_ok=True)  # never briefly open, whatever the umask
        os.chmod(folder, 0o700)
    return folder


def db_path() -> str:
    return os.path.join(home(), DB_NAME)


def log_path() -> str:
    return os.path.join(home(), LOG_NAME)


def settings_path() -> str:
    return os.path.join(home(), SETTINGS_NAME)


def touch_private(path: str) -> None:
    """Create ``path`` 0600 if it does not exist (independent of the umask).

    An existing file is never opened: closing any descriptor of a SQLite database releases
    every POSIX lock this process holds on it, so a second store opened in a process (the MCP
    server's embedding worker) would silently strip the first connection's locks; another
    process could then checkpoint and delete the WAL under it and its writes would be lost.
    """
    if os.path.exists(path):
        return
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(fd)
    os.chmod(path, 0o600)


def fallback_dir() -> str:
    """This user's private folder for fallback logs: ``$TMPDIR/colony-tasks-<uid>``, 0700."""
    tmp = os.environ.get("TMPDIR") or "/tmp"
    return os.path.join(tmp, f"colony-tasks-{os.getuid()}")


def fallback_log_path() -> str:
    """Where this store's log goes when its data folder cannot be written (a read-only home):
    one file per store (named by its folder), inside :func:`fallback_dir`."""
    raw = os.path.abspath(home()).encode("utf-8", "surrogateescape")
    return os.path.join(fallback_dir(), f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}.log")


def private_dir(folder: str) -> None:
    """Create ``folder`` 0700, or check that the existing one is ours, private and not a
    link (anyone can create names in /tmp); raises OSError otherwise."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise PermissionError(f"{folder} is not a private folder of this user")


def open_private(path: str, flags: int) -> int:
    """Open ``path`` without following a symlink; it must be a regular file of this user,
    not group/other accessible and with one link (else OSError)."""
    fd = os.open(path, flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.getuid()
            or info.st_mode & 0o077
            or info.st_nlink != 1
        ):
            raise PermissionError(f"{path} is not a private file of this user")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _append(path: str, line: bytes) -> None:
    try:
        if os.lstat(path).st_size > LOG_MAX_BYTES:
            os.replace(path, path + ".1")
    except FileNotFoundError:
        pass
    fd = open_private(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read_log(path: str) -> list[str]:
    """A log's lines, read as safely as it is written ([] when absent or not private)."""
    try:
        fd = open_private(path, os.O_RDONLY)
    except OSError:
        return []
    with os.fdopen(fd, encoding="utf-8", errors="replace") as handle:
        return handle.readlines()


def log(message: str, *, name: str = LOG_NAME) -> None:
    """Append one line to the hook log (or another log of the data folder: ``name``), rotated
    past ``LOG_MAX_BYTES``; never raises."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    line = f"{stamp} {message.replace(chr(10), ' | ')}\n".encode("utf-8", "replace")
    try:
        _append(os.path.join(ensure_home(), name), line)
    except Exception:
        try:
            private_dir(fallback_dir())
            _append(fallback_log_path(), line)
        except Exception:
            pass
