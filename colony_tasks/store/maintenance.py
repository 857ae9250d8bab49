"""SQL for health checks and safe repairs (``colony-tasks doctor``)."""

from __future__ import annotations

import os
import sqlite3

from .base import Facet


class Admin(Facet):
    """``store.admin``: health checks and safe repairs (``colony-tasks doctor``)."""

    def integrity_check(self) -> list[str]:
        """``PRAGMA integrity_check`` lines: ``["ok"]`` for a healthy file."""
        return [str(r[0]) for r in self.store._all("PRAGMA integrity_check")]

    def table_names(self) -> list[str]:
        """Every table and virtual table in the file."""
        rows = self.store._all("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        return [str(r[0]) for r in rows]

    def fts_indexed_count(self) -> int:
        """How many documents the FTS index holds (its docsize shadow table)."""
        row = self.store._one("SELECT COUNT(*) FROM observations_fts_docsize")
        return int(row[0]) if row else 0

    def fts_consistent(self) -> bool:
        """FTS5's own integrity check of the index against the observations table."""
        try:
            self.store._run(
                "INSERT INTO observations_fts(observations_fts, rank) VALUES ('integrity-check', 1)"
            )
        except sqlite3.DatabaseError:
            return False
        return True

    def wal_bytes(self) -> int:
        try:
            return os.path.getsize(self.store.path + "-wal")
        except OSError:
            return 0

    def checkpoint(self) -> tuple[int, int, int]:
        """``PRAGMA wal_checkpoint(TRUNCATE)``: (busy, log frames, checkpointed frames)."""
        row = self.store._one("PRAGMA wal_checkpoint(TRUNCATE)")
        return (int(row[0]), int(row[1]), int(row[2])) if row else (0, 0, 0)

    def expired_unreleased_claims(self) -> int:
        row = self.store._one(
            "SELECT COUNT(*) FROM claims WHERE released_at IS NULL AND expires_at <= ?",
            (self.store.now(),),
        )
        return int(row[0]) if row else 0
