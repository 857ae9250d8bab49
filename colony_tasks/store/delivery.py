"""SQL for delivery: who a directed message is for, and whether it has reached them.

Also the two counts the loop guard reads (agent requests since the last human event), and the
queries of the wake budgets and of where a session may write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ..base.models import Observation
from .base import StoreBase
from .observations import OBS_COLUMNS, row_to_observation

if TYPE_CHECKING:
    from collections.abc import Sequence


class Inbox(NamedTuple):
    """What a session has waiting besides its thread's news: items addressed to it (or
    urgent) not yet delivered, items it sent whose recipient ended before delivery, and items
    of its that woke their recipient, not yet told (each read only when set)."""

    directed: bool
    undeliverable: bool
    woken: bool


class DeliveryMixin(StoreBase):
    # -- recipients ------------------------------------------------------------------------

    def add_recipients(self, obs_id: int, session_ids: Sequence[str]) -> None:
        self.conn.executemany(
            "INSERT OR IGNORE INTO recipients(observation_id, session_id) VALUES (?, ?)",
            [(obs_id, sid) for sid in session_ids],
        )

    def recipients(self, obs_id: int) -> list[dict[str, Any]]:
        rows = self._all(
            "SELECT r.session_id, s.handle, r.state, r.delivered_at, r.via, s.wake_since,"
            " s.agent FROM recipients r"
            " JOIN sessions s ON s.id = r.session_id WHERE r.observation_id = ? ORDER BY s.handle",
            (obs_id,),
        )
        return [dict(r) for r in rows]

    def mark_delivered(
        self, session_id: str, obs_ids: Sequence[int], *, via: str | None = None
    ) -> None:
        """``via``: how, when not by the session's own next hook ('wake', 'stop'); its
        senders are then told (:meth:`woken_for_sender`)."""
        if not obs_ids:
            return
        marks = ",".join("?" * len(obs_ids))
        self._run(
            f"UPDATE recipients SET state = 'delivered', delivered_at = ?, via = ?"
            f" WHERE session_id = ? AND state = 'pending' AND observation_id IN ({marks})",
            (self.now(), via, session_id, *obs_ids),
        )

    def unmark_delivered(self, session_id: str, obs_ids: Sequence[int]) -> None:
        """Undo a delivery that did not happen (a woken client gone before its reply)."""
        if not obs_ids:
            return
        marks = ",".join("?" * len(obs_ids))
        self._run(
            "UPDATE recipients SET state = 'pending', delivered_at = NULL, via = NULL"
            f" WHERE session_id = ? AND state = 'delivered' AND observation_id IN ({marks})",
            (session_id, *obs_ids),
        )

    # -- waking idle sessions (colony_tasks.domain.wake holds the rule; these are its queries) -----

    @staticmethod
    def _wakes(directed: Sequence[str], anyhow: Sequence[str]) -> tuple[str, tuple[str, ...]]:
        """The SQL condition on ``o`` for an item that wakes its recipient: urgent, of a kind
        in ``anyhow``, or addressed (``to_target``) and of a kind in ``directed``."""
        d_marks, a_marks = ",".join("?" * len(directed)), ",".join("?" * len(anyhow))
        return (
            f" AND (o.urgent = 1 OR o.kind IN ({a_marks})"
            f" OR (o.to_target IS NOT NULL AND o.kind IN ({d_marks})))",
            (*(str(k) for k in anyhow), *(str(k) for k in directed)),
        )

    def pending_wake(
        self, session_id: str, directed: Sequence[str], anyhow: Sequence[str], limit: int = 50
    ) -> list[Observation]:
        """Undelivered items for the session that wake it (see :meth:`_wakes`), oldest first."""
        condition, params = self._wakes(directed, anyhow)
        rows = self._all(
            f"SELECT {OBS_COLUMNS} FROM recipients r JOIN observations o ON o.id = r.observation_id"
            " LEFT JOIN sessions s ON s.id = o.session_id"
            f" WHERE r.session_id = ? AND r.state = 'pending'{condition} ORDER BY o.id LIMIT ?",
            (session_id, *params, limit),
        )
        return [row_to_observation(r) for r in rows]

    def sessions_to_wake(
        self, session_ids: Sequence[str], directed: Sequence[str], anyhow: Sequence[str]
    ) -> dict[str, bool]:
        """One query for every waiting session: ``{session_id: ended}`` for those that ended
        or have an item that wakes them."""
        if not session_ids:
            return {}
        marks = ",".join("?" * len(session_ids))
        condition, params = self._wakes(directed, anyhow)
        rows = self._all(
            f"SELECT s.id, s.ended_at IS NOT NULL FROM sessions s WHERE s.id IN ({marks})"
            " AND (s.ended_at IS NOT NULL OR EXISTS (SELECT 1 FROM recipients r"
            " JOIN observations o ON o.id = r.observation_id"
            f" WHERE r.session_id = s.id AND r.state = 'pending'{condition}))",
            (*session_ids, *params),
        )
        return {r[0]: bool(r[1]) for r in rows}

    def woken_for_sender(self, session_id: str) -> list[dict[str, Any]]:
        """Items by this session that woke their recipient or kept it from stopping, once each:
        they are marked told."""
        with self.transaction():
            rows = [
                dict(r)
                for r in self._all(
                    "SELECT r.observation_id, r.session_id AS recipient, r.via,"
                    " s.handle AS recipient_handle, o.kind FROM recipients r"
                    " CROSS JOIN observations o ON o.id = r.observation_id"
                    " JOIN sessions s ON s.id = r.session_id"
                    " WHERE o.session_id = ? AND r.via IS NOT NULL AND r.told_at IS NULL"
                    " ORDER BY o.id",
                    (session_id,),
                )
            ]
            if rows:
                now = self.now()
                self.conn.executemany(
                    "UPDATE recipients SET told_at = ? WHERE observation_id = ? AND session_id = ?",
                    [(now, r["observation_id"], r["recipient"]) for r in rows],
                )
        return rows

    def recipient_of(
        self, session_id: str, obs_ids: Sequence[int], *, delivered: bool = False
    ) -> set[int]:
        """Which of ``obs_ids`` the session is a recipient of (``delivered``: and has already
        been given, e.g. mid-turn)."""
        if not obs_ids:
            return set()
        marks = ",".join("?" * len(obs_ids))
        state = " AND state = 'delivered'" if delivered else ""
        rows = self._all(
            f"SELECT observation_id FROM recipients WHERE session_id = ?{state}"
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

    def inbox(self, session_id: str, *, directed: bool = True) -> Inbox:
        """The session's :class:`Inbox` in one statement (three round trips to a team store
        otherwise); ``directed=False`` skips the first question (answered False)."""
        pending = (
            "EXISTS (SELECT 1 FROM recipients r JOIN observations o ON o.id = r.observation_id"
            " WHERE r.session_id = ? AND r.state = 'pending'"
            " AND (o.to_target IS NOT NULL OR o.urgent = 1))"
            if directed
            else "0 = 1"
        )
        row = self._one(
            f"SELECT {pending},"
            # CROSS JOIN keeps SQLite on the small partial indexes of undeliverable rows and of
            # untold wakes instead of walking every observation this session wrote (6 ms at 50k).
            " EXISTS (SELECT 1 FROM recipients r CROSS JOIN observations o"
            "  ON o.id = r.observation_id WHERE o.session_id = ? AND r.state = 'undeliverable'),"
            " EXISTS (SELECT 1 FROM recipients r CROSS JOIN observations o"
            "  ON o.id = r.observation_id WHERE o.session_id = ? AND r.via IS NOT NULL"
            "  AND r.told_at IS NULL)",
            ((session_id,) if directed else ()) + (session_id, session_id),
        )
        assert row is not None
        return Inbox(bool(row[0]), bool(row[1]), bool(row[2]))

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
        """Agent-authored items that may wake someone: questions, handoffs and turn passes
        (addressed or broadcast) and any urgent item, whatever its kind."""
        row = self._one(
            "SELECT COUNT(*) FROM observations o JOIN sessions s ON s.id = o.session_id"
            " WHERE o.task_id = ? AND o.id > ? AND s.agent != 'human'"
            " AND (o.kind IN ('question', 'handoff', 'turn') OR o.urgent = 1)",
            (task_id, after_id),
        )
        return int(row[0]) if row else 0

    # -- wake budgets and scope (colony_tasks.domain.wake and .scope hold the rules) ---------

    def wakes_since(self, session_id: str, since: float, *, sender: str | None = None) -> int:
        """How often the session was woken or kept from stopping since ``since`` (one wake
        delivers its items at one time); with ``sender``, only wakes that delivered one of
        that session's items."""
        join, by, params = "", "", [session_id, since]
        if sender is not None:
            join = " JOIN observations o ON o.id = r.observation_id"
            by = " AND o.session_id = ?"
            params.append(sender)
        row = self._one(
            f"SELECT COUNT(DISTINCT r.delivered_at) FROM recipients r{join}"
            " WHERE r.session_id = ? AND r.state = 'delivered' AND r.via IS NOT NULL"
            f" AND r.delivered_at >= ?{by}",
            tuple(params),
        )
        return int(row[0]) if row else 0

    def woken_after(self, session_id: str, since: float) -> bool:
        """Whether the session was woken or kept from stopping at ``since`` or later."""
        row = self._one(
            "SELECT 1 FROM recipients WHERE session_id = ? AND state = 'delivered'"
            " AND via IS NOT NULL AND delivered_at >= ? LIMIT 1",
            (session_id, since),
        )
        return row is not None

    def worked_repos(self, session_id: str) -> set[str]:
        """Repositories whose lane tasks hold this session's own recorded work (its hooks'
        prompts, edits and commands)."""
        rows = self._all(
            "SELECT DISTINCT l.repo_id FROM observations o JOIN tasks t ON t.id = o.task_id"
            " JOIN lanes l ON l.id = t.lane_id WHERE o.session_id = ?"
            " AND o.kind IN ('prompt', 'edit', 'command')",
            (session_id,),
        )
        return {r[0] for r in rows}

    def addressed_by_human(self, task_id: int, handle: str) -> bool:
        """Whether a human addressed an item of the task to ``handle`` (a question, a chain
        turn, a reassigned work item): the human joined that session to the task."""
        row = self._one(
            "SELECT 1 FROM observations o JOIN sessions s ON s.id = o.session_id"
            " WHERE o.task_id = ? AND o.to_target = ? AND s.agent = 'human' LIMIT 1",
            (task_id, handle),
        )
        return row is not None

    def mark_undeliverable(self, session_id: str) -> list[int]:
        """The session ended: its pending deliveries can no longer happen. Items that no longer
        wait on anyone (a question answered or withdrawn, a handoff accepted) are left alone:
        nobody needs to re-address them."""
        rows = self._all(
            "SELECT r.observation_id FROM recipients r JOIN observations o ON o.id = r.observation_id"
            " WHERE r.session_id = ? AND r.state = 'pending'"
            # An interface change matters only to a live session: nobody re-addresses it.
            " AND o.kind != 'interface'"
            " AND (o.status IS NULL OR o.status IN ('pending', 'open'))",
            (session_id,),
        )
        ids = [r[0] for r in rows]
        if ids:
            marks = ",".join("?" * len(ids))
            self._run(
                "UPDATE recipients SET state = 'undeliverable' WHERE session_id = ?"
                f" AND observation_id IN ({marks})",
                (session_id, *ids),
            )
        return ids
