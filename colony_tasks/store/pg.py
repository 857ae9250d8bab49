"""The PostgreSQL backend (team mode): the same store mixins over one pg8000 connection.

The mixins speak a small SQLite dialect. :func:`translate` rewrites it once per statement text
(cached): ``?`` placeholders, ``INSERT OR IGNORE`` → ``ON CONFLICT DO NOTHING``, two-argument
``MAX``/``MIN`` → ``GREATEST``/``LEAST``, SQLite's unary-plus planner hints dropped,
``CROSS JOIN ... ON`` → ``JOIN``, and ``RETURNING id`` on inserts into tables with an identity
column so ``cursor.lastrowid`` works as on SQLite. The few statements that have no
translation (FTS5, PRAGMAs, an unaliased subquery PostgreSQL 15 refuses) are overridden in
:class:`PgStore`.

Every :meth:`transaction` takes a transaction-scoped advisory lock first, so read-then-write
use cases are serialised across all machines exactly as ``BEGIN IMMEDIATE`` serialises them on
one SQLite file: one winner per answer or accept, the chain turn rule, exactly-once delivery.
Statements outside a transaction run in autocommit mode, as on SQLite.

This module imports the driver: hooks never import it (they reach the relay instead).
"""

from __future__ import annotations

import _thread
import re
import ssl
import time
import urllib.parse
from functools import lru_cache

import pg8000.dbapi

from ..backend import redact_url
from . import Store
from .observations import OBS_COLUMNS, row_to_observation
from .pg_schema import MIGRATIONS as PG_MIGRATIONS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    from .schema import Migration

#: The advisory lock every write transaction takes ("colony" in ASCII): advisory locks are
#: scoped to the database, so one team database has one writer at a time.
LOCK_KEY = 0x636F6C6F6E79
CONNECT_TIMEOUT = 5.0
DEFAULT_STATEMENT_TIMEOUT_MS = 15_000

ERRORS: tuple[type[BaseException], ...] = (pg8000.dbapi.Error, OSError)
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    pg8000.dbapi.InterfaceError,
    OSError,
)


class StoreUnavailable(Exception):
    """The PostgreSQL server cannot be reached (the message never holds the password)."""


# -- the dialect ---------------------------------------------------------------------------

_INSERT_OR_IGNORE = re.compile(r"^\s*INSERT\s+OR\s+IGNORE\s+INTO", re.IGNORECASE)
_INSERT_INTO = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)", re.IGNORECASE)
_SCALAR_MAX_MIN = re.compile(r"\b(MAX|MIN)\(([^(),]+),([^(),]+)\)", re.IGNORECASE)
_PLUS_HINT = re.compile(r"(?<=[\s(])\+(?=[A-Za-z_])")
_CROSS_JOIN_ON = re.compile(r"\bCROSS\s+JOIN\s+(\w+(?:\s+\w+)?)\s+ON\b", re.IGNORECASE)


def _placeholders(sql: str) -> str:
    """``?`` → ``%s`` and ``%`` → ``%%`` (the driver's paramstyle) outside quoted strings."""
    out = []
    quote = ""
    for char in sql:
        if quote:
            out.append("%%" if char == "%" else char)
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
            out.append(char)
        elif char == "?":
            out.append("%s")
        elif char == "%":
            out.append("%%")
        else:
            out.append(char)
    return "".join(out)


@lru_cache(maxsize=1024)
def translate(
    sql: str, id_tables: frozenset[str] = frozenset(), bind: bool = True
) -> tuple[str, bool]:
    """The PostgreSQL text of a store statement, and whether it returns the new row's id.

    ``bind``: the statement gets parameters (pg8000 then reads ``%s``; a statement without
    parameters goes through the simple query protocol verbatim)."""
    ignore = bool(_INSERT_OR_IGNORE.match(sql))
    if ignore:
        sql = _INSERT_OR_IGNORE.sub("INSERT INTO", sql, count=1)
    sql = _SCALAR_MAX_MIN.sub(
        lambda m: (
            f"{'GREATEST' if m.group(1).upper() == 'MAX' else 'LEAST'}({m.group(2)},{m.group(3)})"
        ),
        sql,
    )
    sql = _PLUS_HINT.sub("", sql)
    sql = _CROSS_JOIN_ON.sub(r"JOIN \1 ON", sql)
    sql = sql.rstrip().rstrip(";")
    if ignore:
        sql += " ON CONFLICT DO NOTHING"
    insert = _INSERT_INTO.match(sql)
    returns_id = bool(insert and insert.group(1).lower() in id_tables and "RETURNING" not in sql)
    if returns_id:
        sql += " RETURNING id"
    return (_placeholders(sql) if bind else sql), returns_id


# -- rows and cursors ----------------------------------------------------------------------


class Row:
    """A result row read by position, by column name, or as ``dict(row)`` (like sqlite3.Row)."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: dict[str, int], values: Sequence[Any]) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, str):
            return self._values[self._index[key]]
        return self._values[key]

    def keys(self) -> list[str]:
        return list(self._index)

    def __iter__(self) -> Iterable[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Row({dict(zip(self._index, self._values, strict=False))!r})"


class Cursor:
    """What :meth:`Connection.execute` returns: the fetched rows, ``rowcount``, ``lastrowid``."""

    __slots__ = ("_rows", "lastrowid", "rowcount")

    def __init__(self, rows: list[Row], rowcount: int, lastrowid: int | None) -> None:
        self._rows = rows
        self.rowcount = rowcount
        self.lastrowid = lastrowid

    def fetchall(self) -> list[Row]:
        return self._rows

    def fetchone(self) -> Row | None:
        return self._rows[0] if self._rows else None

    def __iter__(self) -> Iterable[Row]:
        return iter(self._rows)


def _rows(cursor: Any) -> list[Row]:
    if cursor.description is None:
        return []
    index = {column[0]: i for i, column in enumerate(cursor.description)}
    return [Row(index, values) for values in cursor.fetchall()]


class Connection:
    """The sqlite3.Connection surface the mixins use (``execute``, ``executemany``), on pg8000."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.id_tables: frozenset[str] = frozenset()
        self.in_transaction = False

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Cursor:
        text, returns_id = translate(sql, self.id_tables, bool(params))
        cursor = self.raw.cursor()
        try:
            cursor.execute(text, tuple(params) if params else ())
            rows = _rows(cursor)
            lastrowid = int(rows[0][0]) if returns_id and rows else None
            return Cursor(rows, cursor.rowcount, lastrowid)
        finally:
            cursor.close()

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> Cursor:
        total = 0
        for params in seq:
            total += max(self.execute(sql, params).rowcount, 0)
        return Cursor([], total, None)

    def execute_simple(self, sql: str) -> None:
        """Run a script of statements without parameters (migrations)."""
        self.raw.execute_simple(sql)

    def close(self) -> None:
        try:
            self.raw.close()
        except ERRORS:
            pass


# -- connecting ----------------------------------------------------------------------------


def connect(url: str, *, timeout: float = CONNECT_TIMEOUT) -> Any:
    """A pg8000 connection for a ``postgresql://user:password@host:port/db?sslmode=`` URL."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ValueError(f"Not a PostgreSQL URL: {redact_url(url)}")
    query = dict(urllib.parse.parse_qsl(parts.query))
    sslmode = query.get("sslmode", "prefer")
    context: ssl.SSLContext | None = None
    if sslmode in ("require", "verify-ca", "verify-full"):
        context = ssl.create_default_context(cafile=query.get("sslrootcert"))
        if sslmode == "require":
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif sslmode == "verify-ca":
            context.check_hostname = False
    try:
        raw = pg8000.dbapi.connect(
            user=urllib.parse.unquote(parts.username or ""),
            password=urllib.parse.unquote(parts.password) if parts.password else None,
            host=parts.hostname or "localhost",
            port=parts.port or 5432,
            database=urllib.parse.unquote(parts.path.lstrip("/")) or None,
            ssl_context=context,
            timeout=timeout,
            application_name="colony-tasks",
        )
    except ERRORS as error:
        # The driver's message may echo connection parameters; never the password.
        message = str(error)
        if parts.password:
            message = message.replace(parts.password, "***")
        raise StoreUnavailable(
            f"Cannot reach the team store {redact_url(url)}: {type(error).__name__}: {message}"
        ) from None
    raw.autocommit = True
    return raw


# -- the store -----------------------------------------------------------------------------


def _fts_terms(match: str) -> str | None:
    """The FTS5 expression :func:`colony_tasks.search.fts_query` builds (``"word"`` or
    ``"word"*`` joined by OR) as a ``to_tsquery`` text: quoted lexemes, ``:*`` for prefixes."""
    terms = []
    for word, star in re.findall(r'"((?:[^"]|"")*)"(\*?)', match):
        word = word.replace('""', '"').replace("'", "''").replace("\\", "")
        if word.strip():
            terms.append(f"'{word}'" + (":*" if star else ""))
    return " | ".join(terms) if terms else None


class PgStore(Store):
    """The store on PostgreSQL: the SQLite store's mixins over :class:`Connection`."""

    backend = "postgresql"

    def __init__(
        self,
        url: str,
        *,
        clock: Callable[[], float] = time.time,
        migrations: Sequence[Migration] = PG_MIGRATIONS,
        migrate: bool = True,
        timeout: float = CONNECT_TIMEOUT,
        statement_timeout_ms: int = DEFAULT_STATEMENT_TIMEOUT_MS,
        **_ignored: Any,
    ) -> None:
        self.url = url
        self.path = redact_url(url)
        self.clock = clock
        self._lock = _thread.RLock()
        self._depth = 0
        self.conn = Connection(connect(url, timeout=timeout))  # type: ignore[assignment]
        if statement_timeout_ms:
            self.conn.execute(f"SET statement_timeout = {int(statement_timeout_ms)}")
        if migrate:
            self.migrate(migrations)
        self._load_id_tables()

    @property
    def address(self) -> str:
        return self.url

    # -- connection and transactions -------------------------------------------------------

    def _load_id_tables(self) -> None:
        rows = self.conn.execute(
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'id'"
            " AND is_identity = 'YES' AND table_schema = current_schema()"
        ).fetchall()
        self.conn.id_tables = frozenset(str(r[0]) for r in rows)  # type: ignore[attr-defined]

    def _begin(self) -> None:
        # One round trip: the simple query protocol runs both statements.
        self.conn.execute(f"BEGIN; SELECT pg_advisory_xact_lock({LOCK_KEY})")
        self.conn.in_transaction = True  # type: ignore[misc]

    def _finish(self, commit: bool) -> None:
        try:
            self.conn.execute("COMMIT" if commit else "ROLLBACK")
        finally:
            self.conn.in_transaction = False  # type: ignore[misc]

    # -- migrations ------------------------------------------------------------------------

    def _applied_versions(self) -> set[int]:
        exists = self.conn.execute("SELECT to_regclass('schema_migrations')").fetchone()
        if exists is None or exists[0] is None:
            return set()
        return {int(r[0]) for r in self.conn.execute("SELECT version FROM schema_migrations")}

    def schema_version(self) -> int:
        return max(self._applied_versions(), default=0)

    def pending_migrations(self, migrations: Sequence[Migration] = PG_MIGRATIONS) -> list[int]:
        done = self._applied_versions()
        return [m.version for m in migrations if m.version not in done]

    def migrate(self, migrations: Sequence[Migration] = PG_MIGRATIONS) -> list[int]:
        """Apply every migration not yet recorded, in order, each in its own transaction."""
        if not self.pending_migrations(migrations):
            return []
        applied = []
        for migration in migrations:
            with self.transaction():
                self.conn.execute_simple(  # type: ignore[attr-defined]
                    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
                    " name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
                )
                if migration.version in self._applied_versions():
                    continue  # another machine applied it while we waited for the lock
                self.conn.execute_simple(migration.sql)  # type: ignore[attr-defined]
                self._run(
                    "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                    (migration.version, migration.name, self.now()),
                )
            applied.append(migration.version)
        self._load_id_tables()
        return applied

    # -- statements SQLite and PostgreSQL say differently ----------------------------------

    def fts_search(
        self,
        match: str,
        *,
        limit: int = 20,
        task_id: int | None = None,
        kinds: Sequence[str] | None = None,
        session_id: str | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> list[tuple[Any, float, str]]:
        """The FTS5 expression as a ``tsquery`` on the GIN-indexed ``search`` column, ranked by
        ``ts_rank_cd`` (negated: lower is better, as bm25 on SQLite)."""
        terms = _fts_terms(match)
        if terms is None:
            return []
        where = ["o.search @@ q"]
        params: list[Any] = [terms]
        if task_id is not None:
            where.append("o.task_id = ?")
            params.append(task_id)
        if kinds:
            where.append(f"o.kind IN ({','.join('?' * len(kinds))})")
            params.extend(kinds)
        if session_id is not None:
            where.append("(o.session_id = ? OR s.handle = ?)")
            params.extend([session_id, session_id])
        if since is not None:
            where.append("o.created_at >= ?")
            params.append(since)
        if until is not None:
            where.append("o.created_at <= ?")
            params.append(until)
        rows = self._all(
            f"SELECT {OBS_COLUMNS}, -ts_rank_cd(o.search, q) AS score,"
            " ts_headline('english', o.text, q,"
            " 'StartSel=[, StopSel=], MaxWords=16, MinWords=4, ShortWord=2') AS snippet"
            " FROM to_tsquery('english', ?) AS q, observations o"
            " LEFT JOIN sessions s ON s.id = o.session_id"
            f" WHERE {' AND '.join(where)} ORDER BY score, o.id DESC LIMIT ?",
            (*params, limit),
        )
        return [(row_to_observation(r), float(r["score"]), r["snippet"]) for r in rows]

    def fts_row_count(self) -> int:
        return self.count_observations()

    def fts_indexed_count(self) -> int:
        row = self._one("SELECT COUNT(*) FROM observations WHERE search IS NOT NULL")
        return int(row[0]) if row else 0

    def fts_consistent(self) -> bool:
        return True  # a generated column cannot drift from its text

    def rebuild_fts(self) -> None:
        return None

    def integrity_check(self) -> list[str]:
        self._one("SELECT 1")
        return ["ok"]

    def wal_bytes(self) -> int:
        return 0

    def checkpoint(self) -> tuple[int, int, int]:
        return (0, 0, 0)

    def last_human_event(self, task_id: int) -> int:
        row = self._one(
            "SELECT GREATEST("
            " (SELECT MAX(o.id) FROM observations o JOIN sessions s ON s.id = o.session_id"
            "  WHERE o.task_id = ? AND s.agent = 'human'),"
            " (SELECT MAX(o.id) FROM participants p"
            "  JOIN observations o ON o.session_id = p.session_id AND o.kind = 'prompt'"
            "  WHERE p.task_id = ?))",
            (task_id, task_id),
        )
        return int(row[0] or 0) if row else 0

    def vectors_by_hash(self, model: str, hashes: Sequence[str]) -> dict[str, tuple[int, bytes]]:
        if not hashes:
            return {}
        marks = ",".join("?" * len(hashes))
        rows = self._all(
            "SELECT DISTINCT ON (content_hash) content_hash, dim, vector FROM vectors"
            f" WHERE model = ? AND content_hash IN ({marks}) ORDER BY content_hash, id",
            (model, *hashes),
        )
        return {r[0]: (int(r[1]), bytes(r[2])) for r in rows}

    # -- team mode -------------------------------------------------------------------------

    def claim_event_key(self, key: str) -> bool:
        """Record a relayed event's idempotency key; False when it was applied before (call
        inside the transaction that applies the event, so both commit or neither does)."""
        cursor = self._run(
            "INSERT OR IGNORE INTO applied_events(key, applied_at) VALUES (?, ?)",
            (key, self.now()),
        )
        return cursor.rowcount == 1

    def prune_event_keys(self, older_than: float) -> int:
        return self._run("DELETE FROM applied_events WHERE applied_at < ?", (older_than,)).rowcount


def is_connection_error(error: BaseException) -> bool:
    """True for errors that mean "the server is away" rather than "this statement failed"."""
    if isinstance(error, StoreUnavailable | pg8000.dbapi.InterfaceError | OSError):
        return True
    if isinstance(error, pg8000.dbapi.DatabaseError):
        args = error.args[0] if error.args else None
        code = args.get("C") if isinstance(args, dict) else None
        # 08: connection exception; 57P: operator intervention (shutdown, crash recovery).
        return bool(code and (code.startswith("08") or code.startswith("57P")))
    return False
