"""SQL for the dependency graph of indexed work trees and the edits the indexer has applied.

``dep_files`` holds one row per indexed source file (its imports as written and its public
surface), ``dep_edges`` the resolved imports (``src`` imports ``dst``, with the names taken),
``dep_repos`` one row per work tree with how imports resolve there, what was skipped and the
last edit observation applied (``edits_seen``). Only the indexer (MCP server worker,
``colony-tasks index``) writes them; the hook path never reads them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..base.models import Lane
from ..base.redact import redact
from .base import Facet

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

FILE_COLUMNS = "path, lang, mtime_ns, size, hash, error, specs_json, surface_json"
# An upsert both SQLite and PostgreSQL read (``INSERT OR REPLACE`` is SQLite's alone).
_UPDATE_FILE = ", ".join(f"{c} = excluded.{c}" for c in FILE_COLUMNS.split(", ")[1:])


class Graph(Facet):
    """``store.graph``: the dependency graphs of indexed work trees (the indexer's tables)."""

    def repo(self, repo: str) -> dict[str, Any] | None:
        row = self.store._one(
            "SELECT repo, root, config_json, skipped_json, built_at, edits_seen FROM dep_repos"
            " WHERE repo = ?",
            (repo,),
        )
        return dict(row) if row else None

    def rows(self, repo: str) -> tuple[list[tuple], list[tuple]]:
        """``(file rows, edge rows)`` of one work tree, in ``depgraph.rows`` order."""
        files = [
            tuple(r)
            for r in self.store._all(
                f"SELECT {FILE_COLUMNS} FROM dep_files WHERE repo = ?", (repo,)
            )
        ]
        edges = [
            tuple(r)
            for r in self.store._all(
                "SELECT src, dst, names_json FROM dep_edges WHERE repo = ?", (repo,)
            )
        ]
        return files, edges

    def save(
        self,
        repo: str,
        *,
        root: str,
        config_json: str,
        skipped: dict[str, int],
        files: Iterable[Sequence[Any]],
        edges: Iterable[Sequence[Any]],
        paths: Iterable[str] | None = None,
        edits_seen: int | None = None,
    ) -> None:
        """Replace a work tree's graph (``paths`` None) or only the rows of ``paths``, in one
        transaction with its ``dep_repos`` row."""
        built_at = self.store.now()
        # Signatures and import specs are the user's code: a default argument can hold a
        # secret. Text columns are redacted like everything else stored, before the lock.
        clean_files = [
            (
                repo,
                redact(path),
                lang,
                mtime,
                size,
                digest,
                error and redact(error),
                redact(specs),
                redact(surface),
            )
            for path, lang, mtime, size, digest, error, specs, surface in files
        ]
        clean_edges = [(repo, redact(src), redact(dst), redact(names)) for src, dst, names in edges]
        with self.store.transaction():
            if paths is None:
                self.store._run("DELETE FROM dep_files WHERE repo = ?", (repo,))
                self.store._run("DELETE FROM dep_edges WHERE repo = ?", (repo,))
            else:
                gone = [(repo, p) for p in paths]
                self.store.conn.executemany(
                    "DELETE FROM dep_files WHERE repo = ? AND path = ?", gone
                )
                self.store.conn.executemany(
                    "DELETE FROM dep_edges WHERE repo = ? AND src = ?", gone
                )
            self.store.conn.executemany(
                f"INSERT INTO dep_files(repo, {FILE_COLUMNS})"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(repo, path) DO UPDATE SET"
                f" {_UPDATE_FILE}",
                clean_files,
            )
            self.store.conn.executemany(
                "INSERT INTO dep_edges(repo, src, dst, names_json) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(repo, src, dst) DO UPDATE SET names_json = excluded.names_json",
                clean_edges,
            )
            self.store._run(
                "INSERT INTO dep_repos(repo, root, config_json, skipped_json, built_at, edits_seen)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(repo) DO UPDATE SET root = excluded.root,"
                " config_json = excluded.config_json, skipped_json = excluded.skipped_json,"
                " built_at = excluded.built_at,"
                " edits_seen = MAX(dep_repos.edits_seen, excluded.edits_seen)",
                (repo, root, config_json, json.dumps(skipped), built_at, edits_seen or 0),
            )

    def set_edits_seen(self, repo: str, observation_id: int) -> None:
        self.store._run(
            "UPDATE dep_repos SET edits_seen = MAX(edits_seen, ?) WHERE repo = ?",
            (int(observation_id), repo),
        )

    def edits_after(
        self, lane_ids: Sequence[int], after_id: int, *, limit: int = 5000
    ) -> list[dict[str, Any]]:
        """Edit observations of sessions in ``lane_ids`` after ``after_id``, one row per path:
        ``id``, ``session_id``, ``created_at``, ``path``; oldest first."""
        if not lane_ids:
            return []
        marks = ",".join("?" * len(lane_ids))
        rows = self.store._all(
            "SELECT o.id, o.session_id, o.created_at, p.path FROM observations o"
            " JOIN observation_paths p ON p.observation_id = o.id"
            " JOIN sessions s ON s.id = o.session_id"
            f" WHERE o.id > ? AND o.kind = 'edit' AND s.lane_id IN ({marks})"
            " ORDER BY o.id LIMIT ?",
            (int(after_id), *lane_ids, int(limit)),
        )
        return [dict(r) for r in rows]

    def lanes_with_live_sessions(self, since: float) -> list[Lane]:
        """Lanes with at least one session that has not ended and was seen after ``since``."""
        rows = self.store._all(
            "SELECT DISTINCT l.id, l.repo_id, l.root, l.repo_name, l.branch FROM lanes l"
            " JOIN sessions s ON s.lane_id = l.id"
            " WHERE s.ended_at IS NULL AND s.last_seen_at >= ? ORDER BY l.id",
            (since,),
        )
        return [Lane(*r) for r in rows]

    def overview(self) -> list[dict[str, Any]]:
        """Per indexed work tree: files, edges, unparseable files, what was skipped, when built."""
        rows = self.store._all(
            "SELECT r.repo, r.built_at, r.skipped_json,"
            " (SELECT COUNT(*) FROM dep_files f WHERE f.repo = r.repo) AS files,"
            " (SELECT COUNT(*) FROM dep_edges e WHERE e.repo = r.repo) AS edges"
            " FROM dep_repos r ORDER BY r.repo"
        )
        out = []
        for row in rows:
            item = dict(row)
            item["skipped"] = json.loads(item.pop("skipped_json") or "{}")
            item["built_at"] = float(item["built_at"])  # stored as TEXT
            out.append(item)
        return out
