"""SQL for claims, recipients and the open items of a thread."""

from __future__ import annotations

from ..models import Observation
from ..redact import redact
from .base import StoreBase
from .observations import OBS_COLUMNS, OBS_FROM, row_to_observation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

CLAIM_COLUMNS = (
    "c.id, c.session_id, c.task_id, c.repo_id, c.lane_id, c.pattern, c.is_glob, c.note,"
    " c.created_at, c.renewed_at, c.expires_at, c.released_at"
)
CLAIM_FROM = "claims c JOIN sessions s ON s.id = c.session_id LEFT JOIN lanes l ON l.id = c.lane_id"
CLAIM_EXTRA = ", s.handle, s.agent, s.last_seen_at, s.ended_at, l.branch"


class ThreadMixin(StoreBase):
    # -- claims ----------------------------------------------------------------------------

    def live_claim(self, session_id: str, repo_id: str, pattern: str) -> dict[str, Any] | None:
        row = self._one(
            f"SELECT {CLAIM_COLUMNS}{CLAIM_EXTRA} FROM {CLAIM_FROM} WHERE c.session_id = ?"
            " AND c.repo_id = ? AND c.pattern = ? AND c.released_at IS NULL AND c.expires_at > ?",
            (session_id, repo_id, pattern, self.now()),
        )
        return dict(row) if row else None

    def insert_claim(
        self,
        session_id: str,
        task_id: int | None,
        repo_id: str,
        lane_id: int | None,
        pattern: str,
        is_glob: bool,
        note: str,
        ttl_seconds: float,
    ) -> int:
        now = self.now()
        cursor = self._run(
            "INSERT INTO claims(session_id, task_id, repo_id, lane_id, pattern, is_glob, note,"
            " created_at, renewed_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                session_id,
                task_id,
                repo_id,
                lane_id,
                pattern,
                int(is_glob),
                redact(note),
                now,
                now,
                now + ttl_seconds,
            ),
        )
        return int(cursor.lastrowid)

    def renew_claim(self, claim_id: int, ttl_seconds: float, note: str | None) -> None:
        now = self.now()
        self._run(
            "UPDATE claims SET renewed_at = ?, expires_at = MAX(expires_at, ?),"
            " note = COALESCE(?, note) WHERE id = ?",
            (now, now + ttl_seconds, redact(note) if note else note, claim_id),
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
        return [dict(r) for r in rows]

    def live_claims_matching(
        self, repo_id: str, paths: Sequence[str], *, exclude_session: str | None = None
    ) -> list[dict[str, Any]]:
        """Live claims in a repository whose pattern is one of ``paths``, plus every live glob."""
        marks = ",".join("?" * len(paths)) or "NULL"
        params: list[Any] = [repo_id, self.now(), *paths]
        skip = ""
        if exclude_session is not None:
            skip = " AND c.session_id != ?"
            params.append(exclude_session)
        rows = self._all(
            f"SELECT {CLAIM_COLUMNS}{CLAIM_EXTRA} FROM {CLAIM_FROM}"
            " WHERE c.repo_id = ? AND c.released_at IS NULL AND c.expires_at > ?"
            f" AND (c.pattern IN ({marks}) OR c.is_glob = 1){skip} AND s.ended_at IS NULL",
            params,
        )
        return [dict(r) for r in rows]

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
            " ORDER BY c.repo_id, c.pattern LIMIT ?",
            (*params, limit),
        )
        return [dict(r) for r in rows]

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
                dict(r)
                for r in self._all(
                    f"SELECT {CLAIM_COLUMNS}{CLAIM_EXTRA} FROM {CLAIM_FROM}"
                    f" WHERE {' AND '.join(where)}",
                    params,
                )
            ]
            if rows:
                ids = [r["id"] for r in rows]
                self._run(
                    f"UPDATE claims SET released_at = ? WHERE id IN ({','.join('?' * len(ids))})",
                    (self.now(), *ids),
                )
        return rows

    def release_expired_claims(self) -> int:
        cursor = self._run(
            "UPDATE claims SET released_at = expires_at WHERE released_at IS NULL AND expires_at <= ?",
            (self.now(),),
        )
        return cursor.rowcount

    # -- recipients ------------------------------------------------------------------------

    def add_recipients(self, obs_id: int, session_ids: Sequence[str]) -> None:
        self.conn.executemany(
            "INSERT OR IGNORE INTO recipients(observation_id, session_id) VALUES (?, ?)",
            [(obs_id, sid) for sid in session_ids],
        )

    def recipients(self, obs_id: int) -> list[dict[str, Any]]:
        rows = self._all(
            "SELECT r.session_id, s.handle, r.state, r.delivered_at FROM recipients r"
            " JOIN sessions s ON s.id = r.session_id WHERE r.observation_id = ? ORDER BY s.handle",
            (obs_id,),
        )
        return [dict(r) for r in rows]

    def mark_delivered(self, session_id: str, obs_ids: Sequence[int]) -> None:
        if not obs_ids:
            return
        marks = ",".join("?" * len(obs_ids))
        self._run(
            f"UPDATE recipients SET state = 'delivered', delivered_at = ? WHERE session_id = ?"
            f" AND state = 'pending' AND observation_id IN ({marks})",
            (self.now(), session_id, *obs_ids),
        )

    def delivered_among(self, session_id: str, obs_ids: Sequence[int]) -> set[int]:
        """Which of ``obs_ids`` were already delivered to the session (e.g. mid-turn)."""
        if not obs_ids:
            return set()
        marks = ",".join("?" * len(obs_ids))
        rows = self._all(
            f"SELECT observation_id FROM recipients WHERE session_id = ? AND state = 'delivered'"
            f" AND observation_id IN ({marks})",
            (session_id, *obs_ids),
        )
        return {r[0] for r in rows}

    def pending_directed(self, session_id: str, limit: int = 50) -> list[Observation]:
        """Undelivered items addressed to the session (by handle or kind) or marked urgent."""
        rows = self._all(
            f"SELECT {OBS_COLUMNS} FROM recipients r JOIN observations o ON o.id = r.observation_id"
            " LEFT JOIN sessions s ON s.id = o.session_id"
            " WHERE r.session_id = ? AND r.state = 'pending'"
            " AND (o.to_target IS NOT NULL OR o.urgent = 1) ORDER BY o.id LIMIT ?",
            (session_id, limit),
        )
        return [row_to_observation(r) for r in rows]

    def has_pending_directed(self, session_id: str) -> bool:
        row = self._one(
            "SELECT 1 FROM recipients r JOIN observations o ON o.id = r.observation_id"
            " WHERE r.session_id = ? AND r.state = 'pending'"
            " AND (o.to_target IS NOT NULL OR o.urgent = 1) LIMIT 1",
            (session_id,),
        )
        return row is not None

    def undelivered_for_sender(self, session_id: str) -> list[dict[str, Any]]:
        """Directed items by this session whose recipient ended before delivery, once each.

        They are marked ``undeliverable-reported`` so the sender is told only once.
        """
        with self.transaction():
            rows = [
                dict(r)
                for r in self._all(
                    "SELECT r.observation_id, r.session_id AS recipient,"
                    " s.handle AS recipient_handle, o.kind, o.text, o.task_id FROM recipients r"
                    " CROSS JOIN observations o ON o.id = r.observation_id"
                    " JOIN sessions s ON s.id = r.session_id"
                    " WHERE o.session_id = ? AND r.state = 'undeliverable' ORDER BY o.id",
                    (session_id,),
                )
            ]
            if rows:
                self.conn.executemany(
                    "UPDATE recipients SET state = 'undeliverable-reported'"
                    " WHERE observation_id = ? AND session_id = ?",
                    [(r["observation_id"], r["recipient"]) for r in rows],
                )
        return rows

    def has_undeliverable(self, session_id: str) -> bool:
        row = self._one(
            # CROSS JOIN keeps SQLite on the small partial index of undeliverable rows instead
            # of walking every observation this session wrote (6 ms at 50k).
            "SELECT 1 FROM recipients r CROSS JOIN observations o ON o.id = r.observation_id"
            " WHERE o.session_id = ? AND r.state = 'undeliverable' LIMIT 1",
            (session_id,),
        )
        return row is not None

    def undelivered_in_task(self, task_id: int) -> list[dict[str, Any]]:
        """Directed items of a task not (yet) delivered: pending or undeliverable."""
        rows = self._all(
            "SELECT o.id, o.kind, a.handle AS sender, s.handle AS recipient, r.state"
            " FROM recipients r JOIN observations o ON o.id = r.observation_id"
            " JOIN sessions s ON s.id = r.session_id LEFT JOIN sessions a ON a.id = o.session_id"
            " WHERE o.task_id = ? AND o.to_target IS NOT NULL AND r.state != 'delivered'"
            " ORDER BY o.id",
            (task_id,),
        )
        return [dict(r) for r in rows]

    def last_human_event(self, task_id: int) -> int:
        """Id of the latest human post in the task or user prompt by one of its participants."""
        row = self._one(
            "SELECT MAX(id) FROM ("
            " SELECT MAX(o.id) AS id FROM observations o JOIN sessions s ON s.id = o.session_id"
            "  WHERE o.task_id = ? AND s.agent = 'human'"
            " UNION ALL"
            " SELECT MAX(o.id) FROM participants p"
            "  JOIN observations o ON o.session_id = p.session_id AND o.kind = 'prompt'"
            "  WHERE p.task_id = ?)",
            (task_id, task_id),
        )
        return int(row[0] or 0) if row else 0

    def directed_agent_items_since(self, task_id: int, after_id: int) -> int:
        """Agent-authored questions, handoffs and turn passes addressed to someone."""
        row = self._one(
            "SELECT COUNT(*) FROM observations o JOIN sessions s ON s.id = o.session_id"
            " WHERE o.task_id = ? AND o.id > ? AND s.agent != 'human'"
            " AND o.to_target IS NOT NULL AND o.kind IN ('question', 'handoff', 'turn')",
            (task_id, after_id),
        )
        return int(row[0]) if row else 0

    def mark_undeliverable(self, session_id: str) -> list[int]:
        """The session ended: its pending deliveries can no longer happen."""
        rows = self._all(
            "SELECT observation_id FROM recipients WHERE session_id = ? AND state = 'pending'",
            (session_id,),
        )
        self._run(
            "UPDATE recipients SET state = 'undeliverable' WHERE session_id = ? AND state = 'pending'",
            (session_id,),
        )
        return [r[0] for r in rows]

    # -- open items ------------------------------------------------------------------------

    def open_items(
        self,
        *,
        kinds: Sequence[str],
        statuses: Sequence[str],
        task_ids: Sequence[int] | None = None,
        exclude_author: str | None = None,
        to_any_of: Sequence[str] | None = None,
        limit: int = 200,
    ) -> list[Observation]:
        """Items waiting on someone: pending questions/handoffs, open blockers."""
        where = [
            f"o.kind IN ({','.join('?' * len(kinds))})",
            f"o.status IN ({','.join('?' * len(statuses))})",
        ]
        params: list[Any] = [*kinds, *statuses]
        if task_ids is not None:
            if not task_ids:
                return []
            where.append(f"o.task_id IN ({','.join('?' * len(task_ids))})")
            params.extend(task_ids)
        if exclude_author is not None:
            where.append("(o.session_id IS NULL OR o.session_id != ?)")
            params.append(exclude_author)
        if to_any_of is not None:
            where.append(
                f"(o.to_target IS NULL OR o.to_target IN ({','.join('?' * len(to_any_of))}))"
            )
            params.extend(to_any_of)
        rows = self._all(
            f"SELECT {OBS_COLUMNS} FROM {OBS_FROM} WHERE {' AND '.join(where)} ORDER BY o.id LIMIT ?",
            (*params, limit),
        )
        return [row_to_observation(r) for r in rows]
