"""Connection handling, transactions and migrations for the colony store."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from typing import TYPE_CHECKING, Any

from ..base import sqlite_file

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .schema import Migration

BUSY_TIMEOUT_MS = 5000
# The last migration in schema.py (tests/store/test_store.py checks they agree). Knowing it here lets
# an up-to-date open skip importing the migrations' SQL: every hook opens the store.
LATEST = 18


def schema_version_at(path: str, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> int:
    """The schema version of the SQLite file at ``path``, read without creating, converting
    (to WAL) or migrating it: 0 for an empty file or another application's database. Raises
    ``sqlite3.Error`` for a file SQLite cannot read (not a database, locked, missing)."""
    import urllib.parse  # here: only the commit guard asks, and every cold hook opens a store

    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout_ms / 1000)
    try:
        return sqlite_file.version(conn)
    finally:
        conn.close()


class StoreBase:
    """One SQLite connection in autocommit mode, WAL, ``synchronous=NORMAL``.

    Writes that read then write run inside :meth:`transaction` (``BEGIN IMMEDIATE``), which
    nests: an inner ``transaction()`` joins the outer one.
    """

    #: ``sqlite`` here; :class:`colony_tasks.store.pg.PgStore` says ``postgresql``.
    backend = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        migrations: Sequence[Migration] | None = None,
    ) -> None:
        self.path = str(path)
        self.clock = clock
        self._lock = threading.RLock()
        self._depth = 0
        self.conn = sqlite_file.connect(self.path, busy_timeout_ms=busy_timeout_ms)
        self.migrate(migrations)

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> StoreBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def now(self) -> float:
        return self.clock()

    @property
    def address(self) -> str:
        """What :func:`colony_tasks.store.open_store` opens this store again with (for a team
        store the URL with its password: never print it; ``path`` is the printable form)."""
        return self.path

    # -- migrations ------------------------------------------------------------------------

    def schema_version(self) -> int:
        return sqlite_file.version(self.conn)

    def migrate(self, migrations: Sequence[Migration] | None = None) -> list[int]:
        """Apply pending migrations (default: all of schema.py); costs one
        ``PRAGMA user_version`` when up to date."""
        if migrations is None:
            if self.schema_version() >= LATEST:
                return []
            from .schema import MIGRATIONS  # only when behind: see LATEST

            migrations = MIGRATIONS
        target = migrations[-1].version if migrations else 0
        if self.schema_version() >= target:
            return []
        applied = []
        for migration in migrations:
            # Re-read inside the loop: another process may have migrated meanwhile.
            if migration.version <= self.schema_version():
                continue
            self._apply(migration)
            applied.append(migration.version)
        return applied

    def _apply(self, migration: Migration) -> None:
        def record(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, self.now()),
            )

        with self._lock:
            sqlite_file.apply(self.conn, migration.version, migration.sql, record)

    def applied_migrations(self) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT version, name, applied_at FROM schema_migrations ORDER BY version"
        )
        return [dict(row) for row in rows]

    # -- transactions ----------------------------------------------------------------------

    def _begin(self, shared: bool = False) -> None:
        """Open the outermost transaction (a backend may take a lock here as well: ``shared``,
        see :meth:`transaction`)."""
        self.conn.execute("BEGIN IMMEDIATE")

    def _finish(self, commit: bool) -> None:
        self.conn.execute("COMMIT" if commit else "ROLLBACK")

    def transaction(self, shared: bool = False) -> _Transaction:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolls back on any exception. Nests.

        ``shared``: the outermost transaction is a relayed hook event's. One SQLite file has
        one writer whatever it is; a team store then takes its lock shared, and locks only the
        tasks the event writes items into (:meth:`lock_task`) and the lane whose task it opens
        (:meth:`lock_lane`), when it first does: events wait only for events writing the same
        task, and the MCP tools and the CLI (not shared) for every event. Ignored by a nested
        transaction."""
        return _Transaction(self, shared)

    def lock_task(self, task_id: int) -> None:
        """Hold the task's items for the rest of the open transaction (called before an item
        is added to it, or its turn taken): its items' ids are then handed out in the order
        their transactions commit, which the delivery and live cursors rely on. One SQLite
        file has one writer: nothing to lock."""

    def holds_locks(self) -> bool:
        """Whether the open shared transaction holds a task's or a lane's lock (other machines'
        events that write there wait for its commit). Never on one SQLite file."""
        return False

    def lock_lane(self, lane_id: int) -> None:
        """Hold the lane for the rest of the open transaction (called before its task is looked
        for and opened, so two machines make one). Nothing to lock on one SQLite file."""

    def _all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self.conn.execute(sql, params).fetchall()

    def _one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Row | None:
        with self._lock:
            return self.conn.execute(sql, params).fetchone()

    def _run(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        with self._lock:
            return self.conn.execute(sql, params)


class _Transaction:
    """The context manager behind :meth:`StoreBase.transaction`.

    A class rather than ``contextlib.contextmanager``: contextlib costs ~2 ms to import in
    every hook process.
    """

    __slots__ = ("shared", "store")

    def __init__(self, store: StoreBase, shared: bool = False) -> None:
        self.store = store
        self.shared = shared

    def __enter__(self) -> sqlite3.Connection:
        store = self.store
        store._lock.acquire()
        try:
            if store._depth == 0:
                store._begin(self.shared)
            store._depth += 1
        except BaseException:
            store._lock.release()
            raise
        return store.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        store = self.store
        try:
            store._depth -= 1
            if store._depth == 0:
                store._finish(exc_type is None)
        finally:
            store._lock.release()


class Facet:
    """A rarely used part of the store (``store.vectors``, ``store.admin``, ``store.overview``,
    ``store.graph``): a small object holding the store, created on first use by a property of
    :class:`colony_tasks.store.Store`. It runs its SQL through the store's ``_all``, ``_one``,
    ``_run`` and ``transaction``, so :class:`colony_tasks.store.pg.PgStore` translates it as
    it translates the store's own statements."""

    __slots__ = ("store",)

    def __init__(self, store: StoreBase) -> None:
        self.store = store
