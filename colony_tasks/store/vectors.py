"""SQL for embedding vectors and the leases that keep concurrent backfills apart.

A vector is a little-endian float32 blob keyed by (observation, model), stored with the model's
dimension and a hash of the embedded text. Backfilling processes lease the rows they are about
to embed (``embed_leases``) inside ``BEGIN IMMEDIATE``, so two processes never embed one row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Facet

if TYPE_CHECKING:
    from collections.abc import Sequence


class Vectors(Facet):
    """``store.vectors``: the embeddings of observations and the backfill's leases."""

    def lease_unembedded(
        self,
        model: str,
        owner: str,
        *,
        limit: int,
        before_id: int | None = None,
        lease_seconds: float = 300,
    ) -> list[tuple[int, str]]:
        """Lease up to ``limit`` observations without a ``model`` vector, newest first.

        ``before_id`` continues a scan below the last batch, so a full backfill reads each row
        once instead of rescanning the embedded ones for every batch.
        """
        now = self.store.now()
        with self.store.transaction():
            self.store._run(
                "DELETE FROM embed_leases WHERE model = ? AND expires_at <= ?", (model, now)
            )
            rows = self.store._all(
                "SELECT o.id, o.text FROM observations o"
                " WHERE NOT EXISTS (SELECT 1 FROM vectors v"
                "                   WHERE v.observation_id = o.id AND v.model = ?)"
                " AND NOT EXISTS (SELECT 1 FROM embed_leases e"
                "                 WHERE e.model = ? AND e.observation_id = o.id)"
                " AND o.id < ? ORDER BY o.id DESC LIMIT ?",
                (model, model, before_id if before_id is not None else 2**62, limit),
            )
            self.store.conn.executemany(
                "INSERT INTO embed_leases(model, observation_id, owner, expires_at)"
                " VALUES (?, ?, ?, ?)",
                [(model, r[0], owner, now + lease_seconds) for r in rows],
            )
        return [(int(r[0]), r[1]) for r in rows]

    def by_hash(self, model: str, hashes: Sequence[str]) -> dict[str, tuple[int, bytes]]:
        """Existing vectors of ``model`` for these content hashes: hash -> (dim, blob)."""
        if not hashes:
            return {}
        marks = ",".join("?" * len(hashes))
        rows = self.store._all(
            f"SELECT content_hash, dim, vector FROM vectors WHERE model = ?"
            f" AND content_hash IN ({marks}) GROUP BY content_hash",
            (model, *hashes),
        )
        return {r[0]: (int(r[1]), bytes(r[2])) for r in rows}

    def save(self, model: str, owner: str, rows: Sequence[tuple[int, int, str, bytes]]) -> int:
        """Write (observation_id, dim, content_hash, blob) rows and drop their leases."""
        now = self.store.now()
        with self.store.transaction():
            self.store.conn.executemany(
                "INSERT OR IGNORE INTO vectors(observation_id, model, dim, content_hash, vector,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?)",
                [(obs, model, dim, digest, blob, now) for obs, dim, digest, blob in rows],
            )
            self.store.conn.executemany(
                "DELETE FROM embed_leases WHERE model = ? AND observation_id = ? AND owner = ?",
                [(model, obs, owner) for obs, *_ in rows],
            )
        return len(rows)

    def release_leases(self, model: str, owner: str) -> None:
        self.store._run("DELETE FROM embed_leases WHERE model = ? AND owner = ?", (model, owner))

    def after(
        self, model: str, after_id: int, *, limit: int = 50_000
    ) -> list[tuple[int, int, int, bytes]]:
        """Vectors of ``model`` stored after row ``after_id``: (row id, observation id, dim, blob)."""
        rows = self.store._all(
            # `+model`: walk the primary key from `after_id` instead of the (model, hash) index
            # plus a sort, which made an idle refresh cost 6 ms at 100k vectors and 67 ms at 1M.
            "SELECT id, observation_id, dim, vector FROM vectors WHERE +model = ? AND id > ?"
            " ORDER BY id LIMIT ?",
            (model, after_id, limit),
        )
        return [(int(r[0]), int(r[1]), int(r[2]), bytes(r[3])) for r in rows]

    def for_observations(self, model: str, observation_ids: Sequence[int]) -> dict[int, bytes]:
        """The ``model`` vector blobs of these observations: observation id -> blob."""
        if not observation_ids:
            return {}
        marks = ",".join("?" * len(observation_ids))
        rows = self.store._all(
            f"SELECT observation_id, vector FROM vectors WHERE observation_id IN ({marks})"
            " AND model = ?",
            (*observation_ids, model),
        )
        return {int(r[0]): bytes(r[1]) for r in rows}

    def last_row(self) -> int:
        """The newest row id of the ``vectors`` table (0 when empty)."""
        row = self.store._one("SELECT MAX(id) FROM vectors")
        return int(row[0]) if row and row[0] is not None else 0

    def any(self) -> bool:
        return self.store._one("SELECT 1 FROM vectors LIMIT 1") is not None

    def counts(self) -> dict[str, int]:
        rows = self.store._all("SELECT model, COUNT(*) FROM vectors GROUP BY model")
        return {r[0]: int(r[1]) for r in rows}

    def count_unembedded(self, model: str) -> int:
        row = self.store._one(
            "SELECT COUNT(*) FROM observations o WHERE NOT EXISTS (SELECT 1 FROM vectors v"
            " WHERE v.observation_id = o.id AND v.model = ?)",
            (model,),
        )
        return int(row[0]) if row else 0

    def drop(self, models: Sequence[str]) -> int:
        """Delete every vector (and lease) of these models; returns how many vectors went."""
        if not models:
            return 0
        marks = ",".join("?" * len(models))
        with self.store.transaction():
            self.store._run(f"DELETE FROM embed_leases WHERE model IN ({marks})", tuple(models))
            return self.store._run(
                f"DELETE FROM vectors WHERE model IN ({marks})", tuple(models)
            ).rowcount

    def models_present(self, models: Sequence[str]) -> list[str]:
        """Those of ``models`` that have at least one vector (one index probe per model)."""
        return [
            m
            for m in models
            if self.store._one("SELECT 1 FROM vectors WHERE model = ? LIMIT 1", (m,))
        ]
