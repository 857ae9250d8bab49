"""SQL for claims: advisory holds on repo-relative paths or globs, with an expiry.

A claim the core makes itself when a session edits a file is ``auto`` (a flag, True in the
dicts returned here); the others were asked for (a claim, a plan item, a handoff).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base.redact import redact
from ..base.text import MAX_TEXT_CHARS
from .base import StoreBase

MAX_NOTE_CHARS = MAX_TEXT_CHARS

if TYPE_CHECKING:
    from collections.abc import Sequence

CLAIM_COLUMNS = (
    "c.id, c.session_id, c.task_id, c.repo_id, c.lane_id, c.pattern, c.is_glob, c.note,"
    " c.created_at, c.renewed_at, c.expires_at, c.released_at, c.regex, c.auto"
)
CLAIM_FROM = "claims c JOIN sessions s ON s.id = c.session_id LEFT JOIN lanes l ON l.id = c.lane_id"
CLAIM_EXTRA = (
    ", s.handle, s.agent, s.last_seen_at, s.ended_at, s.developer, s.machine, s.waiting, l.branch"
)


def claim_row(row: Any) -> dict[str, Any]:
    """A claim row as a dict, its ``auto`` flag a bool."""
    claim = dict(row)
    claim["auto"] = bool(claim["auto"])
    return claim


class ClaimsMixin(StoreBase):
    def live_claim(self, session_id: str, repo_id: str, pattern: str) -> dict[str, Any] | None:
        row = self._one(
            # (session_id || '') keeps SQLite on the (repo_id, pattern) index: by the session's
            # index, a session holding 100k claims made each lookup a scan of them
            f"SELECT {CLAIM_COLUMNS}{CLAIM_EXTRA} FROM {CLAIM_FROM} WHERE (c.session_id || '') = ?"
            " AND c.repo_id = ? AND c.pattern = ? AND c.released_at IS NULL AND c.expires_at > ?",
            (session_id, repo_id, pattern, self.now()),
        )
        return claim_row(row) if row else None

    def insert_claim(
        self,
        session_id: str,
        task_id: int | None,
        repo_id: str,
        lane_id: int | None,
        pattern: str,
        regex: str | None,
        note: str,
        ttl_seconds: float,
        auto: bool = False,
    ) -> int:
        """A claim; a glob carries ``regex``, its gitignore semantics as a regular expression;
        ``auto`` marks the claim an edit made."""
        now = self.now()
        cursor = self._run(
            "INSERT INTO claims(session_id, task_id, repo_id, lane_id, pattern, is_glob, regex,"
            " note, created_at, renewed_at, expires_at, auto)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                session_id,
                task_id,
                repo_id,
                lane_id,
                redact(pattern),
                int(regex is not None),
                regex,
                redact(note, MAX_NOTE_CHARS),
                now,
                now,
                now + ttl_seconds,
                int(auto),
            ),
        )
        return int(cursor.lastrowid or 0)

    def renew_claim(
        self, claim_id: int, ttl_seconds: float, note: str | None, auto: bool = False
    ) -> None:
        """Extend a claim; a ``note`` replaces its note, and the claim is then ``auto`` or not
        as this renewal is (without a note, it keeps both)."""
        now = self.now()
        self._run(
            "UPDATE claims SET renewed_at = ?, expires_at = MAX(expires_at, ?),"
            " note = COALESCE(?, note), auto = COALESCE(?, auto) WHERE id = ?",
            (
                now,
                now + ttl_seconds,
                redact(note, MAX_NOTE_CHARS) if note else note,
                None if note is None else int(auto),
                claim_id,
            ),
        )

    def get_claims(self, claim_ids: Sequence[int]) -> list[dict[str, Any]]:
        if not claim_ids:
            return []
        marks = ",".join("?" * len(claim_ids))
        rows = self._all(
            f"SELECT {CLAIM_COLUMNS}{CLAIM_EXTRA} FROM {CLAIM_FROM} WHERE c.id IN ({marks})"
            " ORDER BY c.id",
            list(claim_ids),
        )
        return [claim_row(r) for r in rows]

    def live_claims_matching(
        self,
        repo_id: str,
        paths: Sequence[str],
        *,
        exclude_session: str | None = None,
        declared_only: bool = False,
    ) -> list[dict[str, Any]]:
        """Live claims in a repository whose pattern is one of ``paths`` or a folder above one,
        plus every live glob; ``declared_only``: only the claims a session asked for, not
        those its edits made (``auto``)."""
        wanted = dict.fromkeys(paths)
        for path in paths:  # a claim on a folder covers the files in it
            parts = path.split("/")
            wanted.update(dict.fromkeys("/".join(parts[:i]) for i in range(1, len(parts))))
        marks = ",".join("?" * len(wanted)) or "NULL"
        now = self.now()
        live = " WHERE c.repo_id = ? AND c.released_at IS NULL AND c.expires_at > ?"
        live += " AND s.ended_at IS NULL" + (" AND c.auto = 0" if declared_only else "")
        skip = " AND c.session_id != ?" if exclude_session is not None else ""
        other = [exclude_session] if exclude_session is not None else []
        # Two indexed reads in one statement (one round trip to a team store), not one with an
        # OR (which read every live claim of the repository): the claims on these paths and
        # their folders, then the repository's live globs.
        rows = self._all(
            f"SELECT {CLAIM_COLUMNS}{CLAIM_EXTRA} FROM {CLAIM_FROM}{live}"
            f" AND c.pattern IN ({marks}) AND c.is_glob = 0{skip}"
            f" UNION ALL SELECT {CLAIM_COLUMNS}{CLAIM_EXTRA} FROM {CLAIM_FROM}{live}"
            f" AND c.is_glob = 1{skip}",
            [repo_id, now, *wanted, *other, repo_id, now, *other],
        )
        return [claim_row(r) for r in rows]

    def list_claims(
        self,
        *,
        session_id: str | None = None,
        repo_id: str | None = None,
        include_expired: bool = False,
        limit: int = 1000,
    ) -> list[dict[str, Any]]:
        where = ["c.released_at IS NULL"]
        params: list[Any] = []
        if not include_expired:
            where.append("c.expires_at > ?")
            params.append(self.now())
        if session_id is not None:
            where.append("c.session_id = ?")
            params.append(session_id)
        if repo_id is not None:
            where.append("c.repo_id = ?")
            params.append(repo_id)
        rows = self._all(
            f"SELECT {CLAIM_COLUMNS}{CLAIM_EXTRA} FROM {CLAIM_FROM} WHERE {' AND '.join(where)}"
            " ORDER BY c.repo_id, c.pattern, c.created_at, c.id LIMIT ?",
            (*params, limit),
        )
        return [claim_row(r) for r in rows]

    def count_unreleased_claims(self, *, repo_id: str | None = None) -> int:
        """How many claims are not released (expired ones included), as list_claims counts."""
        where, params = "released_at IS NULL", []
        if repo_id is not None:
            where += " AND repo_id = ?"
            params.append(repo_id)
        row = self._one(f"SELECT COUNT(*) FROM claims WHERE {where}", params)
        return int(row[0]) if row else 0

    def cap_claims(self, session_id: str, until: float) -> int:
        """Bring the expiry of the session's unreleased claims forward to ``until`` (those
        that would outlive it); returns how many."""
        cursor = self._run(
            "UPDATE claims SET expires_at = ? WHERE session_id = ? AND released_at IS NULL"
            " AND expires_at > ?",
            (until, session_id, until),
        )
        return cursor.rowcount

    def release_claims(
        self,
        session_id: str,
        *,
        patterns: Sequence[str] | None = None,
        repo_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """Release the session's unreleased claims (all, or those with these patterns)."""
        where = ["c.session_id = ?", "c.released_at IS NULL"]
        params: list[Any] = [session_id]
        if patterns is not None:
            if not patterns:
                return []
            where.append(f"c.pattern IN ({','.join('?' * len(patterns))})")
            params.extend(patterns)
        if repo_id is not None:
            where.append("c.repo_id = ?")
            params.append(repo_id)
        with self.transaction():
            rows = [
                claim_row(r)
                for r in self._all(
                    f"SELECT {CLAIM_COLUMNS}{CLAIM_EXTRA} FROM {CLAIM_FROM}"
                    f" WHERE {' AND '.join(where)}",
                    params,
                )
            ]
            if rows:  # one set-based statement, whatever the number of claims
                self._run(
                    f"UPDATE claims SET released_at = ? WHERE {' AND '.join(where)}".replace(
                        "c.", ""
                    ),
                    (self.now(), *params),
                )
        return rows

    def release_all_claims(self, session_id: str) -> int:
        """Release every unreleased claim of the session in one statement; how many."""
        cursor = self._run(
            "UPDATE claims SET released_at = ? WHERE session_id = ? AND released_at IS NULL",
            (self.now(), session_id),
        )
        return max(cursor.rowcount, 0)

    def release_expired_claims(self) -> int:
        cursor = self._run(
            "UPDATE claims SET released_at = expires_at WHERE released_at IS NULL AND expires_at <= ?",
            (self.now(),),
        )
        return cursor.rowcount
