"""How colony-tasks opens and migrates a SQLite file — the store and the team outbox alike.

One recipe: the file private to the user (0600), autocommit mode (transactions are explicit,
``BEGIN IMMEDIATE``), a busy timeout, WAL with ``synchronous = NORMAL`` (a committed row
survives any process crash; only a power loss can take the last few). A migration runs in one
transaction with the bump of ``PRAGMA user_version`` (and, for the store, its row in
``schema_migrations``, its values bound). Standard library only: hooks import this module.
"""

from __future__ import annotations

import sqlite3

from . import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

BUSY_TIMEOUT_MS = 5000


def connect(
    path: str, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS, secure_delete: bool = False
) -> sqlite3.Connection:
    """A connection to ``path`` by the recipe above; ``secure_delete`` zeroes deleted rows'
    bytes instead of leaving them in free pages (the outbox's spooled events)."""
    if path != ":memory:":
        paths.touch_private(path)
    conn = sqlite3.connect(
        path, isolation_level=None, timeout=busy_timeout_ms / 1000, check_same_thread=False
    )
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    if secure_delete:
        conn.execute("PRAGMA secure_delete = ON")
    return conn


def version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def statements(script: str) -> list[str]:
    """The SQL statements of ``script``, where SQLite's own ``sqlite3_complete`` says each ends
    (a trigger's body included)."""
    found, start = [], 0
    for end, char in enumerate(script):
        if char == ";" and sqlite3.complete_statement(script[start : end + 1]):
            found.append(script[start : end + 1].strip())
            start = end + 1
    if script[start:].strip():
        found.append(script[start:].strip())
    return found


def apply(
    conn: sqlite3.Connection,
    target: int,
    sql: str,
    record: Callable[[sqlite3.Connection], None] | None = None,
) -> bool:
    """Run ``sql`` and ``record`` (e.g. the migration's row) in one transaction with
    ``PRAGMA user_version = target``; False when another process got there first."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if version(conn) >= target:  # a concurrent process applied it meanwhile
            conn.execute("ROLLBACK")
            return False
        for statement in statements(sql):
            conn.execute(statement)
        if record is not None:
            record(conn)
        conn.execute(f"PRAGMA user_version = {int(target)}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return True
