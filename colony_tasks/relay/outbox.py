"""The relay's durable local outbox: agent events stored before any delivery attempt.

One SQLite file per user and store (``outbox-<store key>.db`` under the data folder, 0600,
``secure_delete`` on: an applied event does not linger in free pages). The outbox is storage
like the store itself: every text goes through :func:`colony_tasks.base.redact.redact_value` before
it is written (the payload, keys included, and the error of a failed attempt), so a secret an
agent typed never reaches the disk even while the team store is away.
A session's rows are applied in ``id`` order, and the sessions take turns (:meth:`Outbox.pending`:
one agent firing fast does not hold another's edit behind its backlog); a row is deleted once
applied; a row that keeps failing for a
reason other than the server being away is marked ``stuck`` after :data:`MAX_ATTEMPTS` and
left for ``colony-tasks doctor`` to show. ``notices`` remembers which sessions were told that
the team store is unreachable, so each is told once that it is back. ``late_replies`` and
``late_dropped`` keep the replies hooks left without, for their sessions' next hooks
(:mod:`colony_tasks.relay.late`). Standard library only: hooks import this module.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time

from ..base import paths, sqlite_file
from ..base.redact import redact, redact_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_ATTEMPTS = 3
SCHEMA_VERSION = 2

SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    event TEXT NOT NULL,
    agent TEXT,
    session_id TEXT NOT NULL DEFAULT '',
    agent_pid INTEGER,
    payload TEXT NOT NULL,
    created_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    stuck INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS notices (
    session_id TEXT PRIMARY KEY,
    told_down_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS late_replies (
    row_id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    agent_pid INTEGER,
    context TEXT,
    deny TEXT,
    has_reply INTEGER NOT NULL DEFAULT 0,
    left_at REAL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS late_replies_session ON late_replies(session_id, row_id);
CREATE TABLE IF NOT EXISTS late_dropped (
    session_id TEXT PRIMARY KEY,
    count INTEGER NOT NULL
);
"""


def outbox_path(store_key: str) -> str:
    return os.path.join(paths.home(), f"outbox-{store_key}.db")


class Outbox:
    def __init__(self, path: str) -> None:
        paths.ensure_home()
        self.path = path
        # The store's recipe (colony_tasks.base.sqlite_file). Spooled payloads are redacted, but
        # still the agent's prompts and commands: their bytes are zeroed when a row is deleted
        # (secure_delete) instead of lingering in free pages.
        self.conn = sqlite_file.connect(path, secure_delete=True)
        if sqlite_file.version(self.conn) < SCHEMA_VERSION:
            sqlite_file.apply(self.conn, SCHEMA_VERSION, SCHEMA)

    def close(self) -> None:
        self.conn.close()

    def put(
        self,
        key: str,
        event: str,
        agent: str | None,
        payload: dict[str, Any],
        *,
        session_id: str = "",
        agent_pid: int | None = None,
    ) -> int:
        """Spool one event; its payload and session id redacted first (the relay's store
        redacts again as it writes, which leaves a redacted text unchanged)."""
        cursor = self.conn.execute(
            "INSERT INTO outbox(key, event, agent, session_id, agent_pid, payload, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                event,
                agent,
                redact(session_id),
                agent_pid,
                json.dumps(redact_value(payload), ensure_ascii=False, separators=(",", ":")),
                time.time(),
            ),
        )
        return int(cursor.lastrowid or 0)

    def pending(
        self, limit: int = 100, served: dict[str, float] | None = None
    ) -> list[sqlite3.Row]:
        """The next ``limit`` rows to apply: each session's in the order they came, the
        sessions in turn — every session's oldest row, then every session's second, ... —
        and, among the rows read, within a turn the session ``served`` last (when the relay
        last applied one of its rows) after the others: a session's oldest row waits
        for at most one row of each other session, however many they spooled."""
        rows = self.conn.execute(
            "SELECT *, ROW_NUMBER() OVER (PARTITION BY session_id ORDER BY id) AS turn"
            " FROM outbox WHERE stuck = 0 ORDER BY turn, id LIMIT ?",
            (limit,),
        ).fetchall()
        if served:
            rows.sort(key=lambda r: (r["turn"], served.get(r["session_id"], -1), r["id"]))
        return rows

    def done(self, row_id: int) -> None:
        self.conn.execute("DELETE FROM outbox WHERE id = ?", (row_id,))

    def failed(self, row_id: int, error: str) -> bool:
        """Count a failed attempt; True when the row is now stuck (skipped from then on)."""
        self.conn.execute(
            "UPDATE outbox SET attempts = attempts + 1, last_error = ?,"
            " stuck = (attempts + 1 >= ?) WHERE id = ?",
            (redact(error, 500), MAX_ATTEMPTS, row_id),
        )
        row = self.conn.execute("SELECT stuck FROM outbox WHERE id = ?", (row_id,)).fetchone()
        return bool(row and row[0])

    def counts(self) -> dict[str, Any]:
        row = self.conn.execute(
            "SELECT COUNT(*) FILTER (WHERE stuck = 0), COUNT(*) FILTER (WHERE stuck = 1),"
            " MIN(created_at) FILTER (WHERE stuck = 0) FROM outbox"
        ).fetchone()
        return {"pending": int(row[0]), "stuck": int(row[1]), "oldest": row[2]}

    def stuck(self, limit: int = 20) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT id, event, session_id, created_at, attempts, last_error FROM outbox"
            " WHERE stuck = 1 ORDER BY id LIMIT ?",
            (limit,),
        )
        return [dict(r) for r in rows]

    # -- the once-only notices -------------------------------------------------------------

    def told_down(self, session_id: str) -> bool:
        row = self.conn.execute("SELECT 1 FROM notices WHERE session_id = ?", (redact(session_id),))
        return row.fetchone() is not None

    def mark_told_down(self, session_id: str) -> None:
        self.conn.execute(
            "INSERT OR IGNORE INTO notices(session_id, told_down_at) VALUES (?, ?)",
            (redact(session_id), time.time()),
        )

    def clear_told_down(self, session_id: str) -> bool:
        """Forget the notice; True when the session had been told (and must hear it is back)."""
        return (
            self.conn.execute(
                "DELETE FROM notices WHERE session_id = ?", (redact(session_id),)
            ).rowcount
            == 1
        )
