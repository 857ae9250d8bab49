"""SQL for regions: per session and file, what the session changed, as ranges of base lines.

A row holds the file's *base* (its content where the session's branch forked, else before the
session's first edit; NULL for a file the session created), the base's hash (two sessions on one base compare line numbers as
they are), the changes ``[[bs, be, text], ...]`` (base lines ``[bs, be)`` replaced by
``text``; :mod:`colony_tasks.domain.regions`) and ``told``: the overlaps the session has
already been warned about (each told once).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..base.redact import redact
from .base import StoreBase

if TYPE_CHECKING:
    from collections.abc import Sequence

REGION_COLUMNS = (
    "r.session_id, r.repo_id, r.lane_id, r.path, r.base, r.base_hash, r.changes, r.told"
)
REGION_KEYS = tuple(column.strip().removeprefix("r.") for column in REGION_COLUMNS.split(","))


def region_row(row: Any) -> dict[str, Any]:
    region = dict(row)
    region["changes"] = [(int(s), int(e), str(t)) for s, e, t in json.loads(region["changes"])]
    region["told"] = list(json.loads(region["told"]))
    return region


class RegionsMixin(StoreBase):
    def region(self, session_id: str, path: str) -> dict[str, Any] | None:
        """The session's region of ``path`` (repo-relative), None before its first edit."""
        row = self._one(
            f"SELECT {REGION_COLUMNS} FROM regions r WHERE r.session_id = ? AND r.path = ?",
            (session_id, redact(path)),
        )
        return region_row(row) if row else None

    def save_region(
        self,
        session_id: str,
        repo_id: str,
        lane_id: int | None,
        path: str,
        *,
        base: str | None,
        base_hash: str,
        changes: Sequence[tuple[int, int, str]],
        told: Sequence[str] = (),
    ) -> None:
        """Write the session's region of ``path`` (its base moves when its branch's fork point
        does: a merge, a rebase, a commit on the default branch)."""
        stored = json.dumps([[s, e, redact(t)] for s, e, t in changes])
        self._run(
            "INSERT INTO regions(session_id, repo_id, lane_id, path, base, base_hash, changes,"
            " told, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(session_id, path) DO UPDATE SET base = excluded.base,"
            " base_hash = excluded.base_hash, changes = excluded.changes,"
            " told = excluded.told, updated_at = excluded.updated_at",
            (
                session_id,
                repo_id,
                lane_id,
                redact(path),
                None if base is None else redact(base),
                base_hash,
                stored,
                json.dumps(list(told)),
                self.now(),
            ),
        )

    def file_regions(
        self, session_id: str, repo_id: str, path: str
    ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """The session's region of ``path`` (as :meth:`region`) and other live sessions'
        non-empty regions of it in the repository, on any branch, with each session's handle,
        agent, who it is and branch — in one statement (an edit weighs both: a round trip
        each to a team store)."""
        extra = "s.handle, s.agent, s.developer, s.machine, l.branch"
        joined = " FROM regions r JOIN sessions s ON s.id = r.session_id LEFT JOIN lanes l ON l.id = r.lane_id"
        rows = self._all(
            f"SELECT 1 AS mine, {REGION_COLUMNS}, {extra}, r.updated_at{joined}"
            " WHERE r.session_id = ? AND r.path = ?"
            f" UNION ALL SELECT 0, {REGION_COLUMNS}, {extra}, r.updated_at{joined}"
            " WHERE r.repo_id = ? AND r.path = ? AND r.session_id <> ? AND s.ended_at IS NULL"
            " AND r.changes <> '[]' ORDER BY 1 DESC, updated_at",
            (session_id, redact(path), repo_id, redact(path), session_id),
        )
        mine, others = None, []
        for row in rows:
            region = region_row(row)
            del region["updated_at"]
            if region.pop("mine"):
                mine = {k: region[k] for k in REGION_KEYS}
            else:
                others.append(region)
        return mine, others

    def repo_regions(self, repo_id: str) -> list[dict[str, Any]]:
        """Every live session's non-empty regions in the repository (``colony-tasks conflicts``)."""
        rows = self._all(
            f"SELECT {REGION_COLUMNS}, s.handle, s.agent, s.developer, s.machine, l.branch"
            " FROM regions r JOIN sessions s ON s.id = r.session_id"
            " LEFT JOIN lanes l ON l.id = r.lane_id"
            " WHERE r.repo_id = ? AND s.ended_at IS NULL AND r.changes <> '[]'"
            " ORDER BY r.path, r.updated_at",
            (repo_id,),
        )
        return [region_row(row) for row in rows]
