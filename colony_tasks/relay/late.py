"""Replies their hooks did not wait for, kept for their sessions' next hooks (team mode).

A team-mode hook waits a bounded time for its spooled event's reply. When the team store is
far away the event may be applied after the hook has left (or by a relay started after the one
it asked was stopped); what the core rendered for it — a warning about another machine's edit,
a delta, items it marked delivered — must still reach the agent, once. So every reply that has
something to show, to an event that can show context, is kept in the outbox's SQLite file
(``late_replies``, one row per spooled event) until it is handed over:

- to its own hook, which collects it in time (:meth:`LateReplies.collected`), or asks a
  restarted relay for it (:meth:`LateReplies.own`);
- else, once its hook has left (``left_at``: the hook gave up, :meth:`LateReplies.left`; its
  relay restarted, :meth:`LateReplies.orphaned`; nobody collected it, :meth:`LateReplies.uncollected`),
  to the session's next hook that can show context (:meth:`LateReplies.take`), before that
  hook's own text, with a lead-in saying it came late.

A late deny can no longer stop the action: its reason is said as context. A session keeps its
newest :data:`KEEP` late replies; older ones are counted (``late_dropped``) and the count is
said. A session that ended drops its late replies (:meth:`LateReplies.ended`). Only a client of
the agent process the event was spooled under is given them (the relay's rule for replies).
Texts are redacted as they are written, like every text of the outbox; they are never logged.
The relay calls these methods under its lock, so a reply is handed over once. Standard library
only.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..base.redact import redact

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable

#: How many late replies a session keeps (the newest); older ones are only counted.
KEEP = 5
LEAD_IN = "colony-tasks (arrived after your last action):"
TOO_LATE = "colony-tasks would have refused that action, but the answer came after it ran: "

_LATE = "session_id = ? AND left_at IS NOT NULL AND has_reply = 1"


def shown(reply: dict[str, Any]) -> bool:
    """Whether a reply has something for the agent to read."""
    return bool(reply.get("context") or reply.get("deny"))


class LateReplies:
    """The ``late_replies`` and ``late_dropped`` tables of one outbox connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    # -- the worker's side -----------------------------------------------------------------

    def kept(self, row_id: int, session: str, owner: int | None, reply: dict[str, Any]) -> bool:
        """Keep the reply to an event of ``session`` that can show context until it is handed
        over; True when its hook has already left (the reply is late and waits for the
        session's next hook)."""
        row = self.conn.execute(
            "SELECT left_at IS NOT NULL FROM late_replies WHERE row_id = ?", (row_id,)
        ).fetchone()
        gone = bool(row and row[0])
        if not shown(reply):
            if row is not None:
                self.conn.execute("DELETE FROM late_replies WHERE row_id = ?", (row_id,))
            return gone
        self.conn.execute(
            "INSERT INTO late_replies(row_id, session_id, agent_pid, context, deny, has_reply,"
            " created_at) VALUES (?, ?, ?, ?, ?, 1, ?) ON CONFLICT(row_id) DO UPDATE SET"
            " session_id = excluded.session_id, agent_pid = excluded.agent_pid,"
            " context = excluded.context, deny = excluded.deny, has_reply = 1",
            (
                row_id,
                redact(session),
                owner,
                redact(str(reply.get("context") or "")),
                redact(str(reply.get("deny") or "")),
                time.time(),
            ),
        )
        if gone:
            self._bound(session)
        return gone

    def ended(self, session: str) -> None:
        """The session ended: its late replies are dropped."""
        key = redact(session)
        self.conn.execute("DELETE FROM late_replies WHERE session_id = ?", (key,))
        self.conn.execute("DELETE FROM late_dropped WHERE session_id = ?", (key,))

    def prune(self, before: float) -> None:
        """Forget what was kept before ``before`` (a session that never spoke again)."""
        self.conn.execute("DELETE FROM late_replies WHERE created_at < ?", (before,))

    # -- the hooks' side -------------------------------------------------------------------

    def left(self, row_id: int, session: str) -> None:
        """The hook of ``row_id`` left without its reply: the reply, now or when it comes, is
        the session's next hook's."""
        self.conn.execute(
            "INSERT INTO late_replies(row_id, session_id, left_at, created_at) VALUES"
            " (?, ?, ?, ?) ON CONFLICT(row_id) DO UPDATE SET left_at = excluded.left_at",
            (row_id, redact(session), time.time(), time.time()),
        )
        self._bound(session)

    def uncollected(self, row_ids: Iterable[int]) -> None:
        """Replies nobody asked for in time (their hooks were gone): late."""
        for row_id in row_ids:
            row = self.conn.execute(
                "SELECT session_id FROM late_replies WHERE row_id = ? AND left_at IS NULL",
                (row_id,),
            ).fetchone()
            if row is not None:
                self.conn.execute(
                    "UPDATE late_replies SET left_at = ? WHERE row_id = ?", (time.time(), row_id)
                )
                self._bound(row[0])

    def orphaned(self) -> None:
        """A relay starts: the replies a previous one kept for hooks that were waiting are
        late (a hook asking again for its own still gets it: :meth:`own`)."""
        waiting = "left_at IS NULL AND has_reply = 1"
        rows = self.conn.execute(f"SELECT DISTINCT session_id FROM late_replies WHERE {waiting}")
        sessions = [r[0] for r in rows]
        self.conn.execute(f"UPDATE late_replies SET left_at = ? WHERE {waiting}", (time.time(),))
        for session in sessions:
            self._bound(session)

    def own(self, row_id: int) -> tuple[dict[str, Any], int | None] | None:
        """The kept reply to ``row_id`` and the agent process it was spooled under (its hook
        asks a relay that did not apply it: the one before was restarted)."""
        row = self.conn.execute(
            "SELECT context, deny, agent_pid FROM late_replies WHERE row_id = ? AND has_reply = 1",
            (row_id,),
        ).fetchone()
        if row is None:
            return None
        return {"context": row["context"], "deny": row["deny"]}, row["agent_pid"]

    def collected(self, row_id: int) -> None:
        """Its own hook has the reply: nothing is kept."""
        self.conn.execute("DELETE FROM late_replies WHERE row_id = ?", (row_id,))

    def take(self, session: str, chain: list[int] | None) -> str:
        """The session's late replies that ``chain`` (the asking client's process chain) may
        have, as one text, and forget them ('' when there are none)."""
        key = redact(session)
        rows = self.conn.execute(
            f"SELECT row_id, agent_pid, context, deny FROM late_replies WHERE {_LATE}"
            " ORDER BY row_id",
            (key,),
        ).fetchall()
        mine = [r for r in rows if chain is None or r["agent_pid"] in (None, *chain)]
        if not mine:
            return ""
        self.conn.executemany(
            "DELETE FROM late_replies WHERE row_id = ?", [(r["row_id"],) for r in mine]
        )
        counted = self.conn.execute(
            "SELECT count FROM late_dropped WHERE session_id = ?", (key,)
        ).fetchone()
        self.conn.execute("DELETE FROM late_dropped WHERE session_id = ?", (key,))
        dropped = (counted[0] if counted else 0) + max(len(mine) - KEEP, 0)
        texts = [_text(r["context"], r["deny"]) for r in mine[-KEEP:]]
        if dropped:
            texts.append(
                f"({dropped} earlier late {'reply was' if dropped == 1 else 'replies were'}"
                " dropped.)"
            )
        return "\n".join((LEAD_IN, "\n\n".join(texts)))

    def _bound(self, session: str) -> None:
        key = redact(session)
        dropped = self.conn.execute(
            f"DELETE FROM late_replies WHERE {_LATE} AND row_id NOT IN"
            f" (SELECT row_id FROM late_replies WHERE {_LATE} ORDER BY row_id DESC LIMIT ?)",
            (key, key, KEEP),
        ).rowcount
        if dropped > 0:
            self.conn.execute(
                "INSERT INTO late_dropped(session_id, count) VALUES (?, ?)"
                " ON CONFLICT(session_id) DO UPDATE SET count = count + excluded.count",
                (key, dropped),
            )


def _text(context: str | None, deny: str | None) -> str:
    return "\n".join(filter(None, (context, f"{TOO_LATE}{deny}" if deny else "")))
