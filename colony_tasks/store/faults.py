"""Which errors mean the store cannot take a write now (a full disk, a read-only file or
mount, an I/O error), in a sentence: the cause the relay logs when it holds an event
(:mod:`colony_tasks.relay.held`) and the MCP server answers instead of a bare failure.
Standard library only: hooks import it.
"""

from __future__ import annotations

import sqlite3

#: SQLite's primary result codes that mean "the store cannot take a write now".
_STORAGE_CODES = {
    3: "the store's file is not writable",  # SQLITE_PERM
    8: "the store is read-only",  # SQLITE_READONLY
    10: "a disk I/O error",  # SQLITE_IOERR
    13: "the disk is full",  # SQLITE_FULL
    14: "the store's file cannot be opened",  # SQLITE_CANTOPEN
}
_STORAGE_ERRNOS = {28: "the disk is full", 30: "the file system is read-only", 122: "over quota"}


def storage_failure(error: BaseException) -> str | None:
    """Why the store cannot take a write, for an error that says so; None for any other
    error (a bug or a refusal is not held: it would fail the same way again)."""
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF in _STORAGE_CODES:
            return f"{_STORAGE_CODES[code & 0xFF]} ({error})"
    if isinstance(error, OSError) and error.errno in _STORAGE_ERRNOS:
        return f"{_STORAGE_ERRNOS[error.errno]} ({error.strerror})"
    return None
