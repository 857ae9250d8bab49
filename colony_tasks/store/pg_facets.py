"""The facets of the PostgreSQL store (``store.admin``, ``store.vectors``): the few checks and
reads that SQLite answers through PRAGMAs, FTS5 or a bare GROUP BY, said the PostgreSQL way."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .maintenance import Admin
from .vectors import Vectors

if TYPE_CHECKING:
    from collections.abc import Sequence


class PgAdmin(Admin):
    """``store.admin`` on PostgreSQL: the checks SQLite runs through PRAGMAs and FTS5."""

    def fts_indexed_count(self) -> int:
        row = self.store._one("SELECT COUNT(*) FROM observations WHERE search IS NOT NULL")
        return int(row[0]) if row else 0

    def fts_consistent(self) -> bool:
        return True  # a generated column cannot drift from its text

    def integrity_check(self) -> list[str]:
        self.store._one("SELECT 1")
        return ["ok"]

    def table_names(self) -> list[str]:
        rows = self.store._all(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema() ORDER BY table_name"
        )
        return [str(r[0]) for r in rows]

    def wal_bytes(self) -> int:
        return 0

    def checkpoint(self) -> tuple[int, int, int]:
        return (0, 0, 0)


class PgVectors(Vectors):
    """``store.vectors`` on PostgreSQL: one row per hash without SQLite's bare GROUP BY."""

    def by_hash(self, model: str, hashes: Sequence[str]) -> dict[str, tuple[int, bytes]]:
        if not hashes:
            return {}
        marks = ",".join("?" * len(hashes))
        rows = self.store._all(
            "SELECT DISTINCT ON (content_hash) content_hash, dim, vector FROM vectors"
            f" WHERE model = ? AND content_hash IN ({marks}) ORDER BY content_hash, id",
            (model, *hashes),
        )
        return {r[0]: (int(r[1]), bytes(r[2])) for r in rows}
