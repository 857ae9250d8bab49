"""SQL for lanes (repository + branch) and sessions (one agent run each)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base.models import Lane, Session
from ..base.redact import redact
from .base import StoreBase

if TYPE_CHECKING:
    import sqlite3

SESSION_COLUMNS = (
    "id, handle, agent, cwd, lane_id, agent_pid, started_at, last_seen_at, ended_at, machine,"
    " developer, waiting, waiting_since"
)
INSERT_COLUMNS = (
    "id, handle, agent, cwd, lane_id, agent_pid, started_at, last_seen_at, ended_at, machine,"
    " developer"
)


def _session(row: sqlite3.Row | None) -> Session | None:
    return Session(**dict(row)) if row else None


class SessionsMixin(StoreBase):
    # -- lanes -----------------------------------------------------------------------------

    def upsert_lane(
        self, repo_id: str, root: str, repo_name: str, branch: str, *, legacy_id: str = ""
    ) -> Lane:
        """The lane for (repository, branch), created on first use — or, when the repository
        had the identity ``legacy_id`` before and a lane of that branch exists under it, that
        lane re-keyed to ``repo_id``, so its thread goes on. Every part is redacted, for the
        lookup too, so a lane keeps one identity."""
        repo_id, root, repo_name, branch = (redact(v) for v in (repo_id, root, repo_name, branch))
        select = "SELECT id, repo_id, root, repo_name, branch FROM lanes WHERE repo_id = ? AND branch = ?"
        row = self._one(select, (repo_id, branch))
        if row is None:
            with self.transaction():
                row = self._one(select, (repo_id, branch))
                if row is None and legacy_id:
                    self._run(
                        "UPDATE lanes SET repo_id = ? WHERE repo_id = ? AND branch = ?",
                        (repo_id, redact(legacy_id), branch),
                    )
                    row = self._one(select, (repo_id, branch))
                if row is None:
                    self._run(
                        "INSERT OR IGNORE INTO lanes(repo_id, root, repo_name, branch, created_at)"
                        " VALUES (?, ?, ?, ?, ?)",
                        (repo_id, root, repo_name, branch, self.now()),
                    )
                    row = self._one(select, (repo_id, branch))
        assert row is not None
        return Lane(**dict(row))

    def find_lane(self, repo_id: str, branch: str) -> Lane | None:
        """The lane for (repository, branch) if one exists; never creates it."""
        repo_id, branch = redact(repo_id), redact(branch)
        row = self._one(
            "SELECT id, repo_id, root, repo_name, branch FROM lanes WHERE repo_id = ? AND branch = ?",
            (repo_id, branch),
        )
        return Lane(**dict(row)) if row else None

    def get_lane(self, lane_id: int) -> Lane | None:
        row = self._one(
            "SELECT id, repo_id, root, repo_name, branch FROM lanes WHERE id = ?", (lane_id,)
        )
        if row is None:
            return None
        return Lane(**dict(row))

    def lane_and_task(self, lane_id: int) -> tuple[Lane | None, int | None]:
        """A lane and the id of its open lane task (None when it has none), in one read: every
        event resolves both (a round trip each to a team store)."""
        row = self._one(
            "SELECT l.id, l.repo_id, l.root, l.repo_name, l.branch, t.id AS task_id FROM lanes l"
            " LEFT JOIN tasks t ON t.lane_id = l.id AND t.mode = 'lane' AND t.status = 'open'"
            " WHERE l.id = ?",
            (lane_id,),
        )
        if row is None:
            return None, None
        found = dict(row)
        task_id = found.pop("task_id")
        return Lane(**found), (int(task_id) if task_id is not None else None)

    # -- sessions --------------------------------------------------------------------------

    def get_session(self, session_id: str) -> Session | None:
        return _session(
            self._one(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,))
        )

    def get_session_by_handle(self, handle: str) -> Session | None:
        return _session(
            self._one(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE handle = ?", (handle,))
        )

    def handle_taken(self, handle: str, *, by_other_than: str) -> bool:
        """Whether a session other than ``by_other_than`` has ``handle`` as its handle or as
        its id (one read: handles and ids are separate namespaces a lookup tries in turn)."""
        row = self._one(
            "SELECT 1 FROM sessions WHERE (handle = ? OR id = ?) AND id <> ? LIMIT 1",
            (handle, handle, by_other_than),
        )
        return row is not None

    def insert_session(
        self,
        session_id: str,
        handle: str,
        agent: str,
        cwd: str,
        lane_id: int | None,
        agent_pid: int | None,
        *,
        machine: str = "",
        developer: str = "",
    ) -> None:
        now = self.now()
        self._run(
            f"INSERT INTO sessions({INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)",
            (
                session_id,
                handle,
                agent,
                redact(cwd),
                lane_id,
                agent_pid,
                now,
                now,
                machine,
                developer,
            ),
        )

    def refresh_session(
        self,
        session_id: str,
        *,
        cwd: str | None = None,
        lane_id: int | None = None,
        agent_pid: int | None = None,
        reopen: bool = False,
    ) -> None:
        sets = ["last_seen_at = ?", "waiting = ''", "waiting_since = NULL"]
        params: list[Any] = [self.now()]
        cwd = redact(cwd) if cwd else cwd
        for column, value in (("cwd", cwd), ("lane_id", lane_id), ("agent_pid", agent_pid)):
            if value is not None:
                sets.append(f"{column} = ?")
                params.append(value)
        if reopen:
            sets.append("ended_at = NULL")
        params.append(session_id)
        self._run(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", params)

    def set_wake_since(self, session_id: str, since: float | None) -> None:
        """The session idles with a wake wait held since ``since`` (None: no longer)."""
        self._run("UPDATE sessions SET wake_since = ? WHERE id = ?", (since, session_id))

    def clear_wake_holds(self) -> None:
        """No wake wait is held (a relay starts: any hold left is a dead relay's)."""
        self._run("UPDATE sessions SET wake_since = NULL WHERE wake_since IS NOT NULL")

    def stop_blocks(self, session_id: str) -> int:
        row = self._one("SELECT stop_blocks FROM sessions WHERE id = ?", (session_id,))
        return int(row[0]) if row else 0

    def set_stop_blocks(self, session_id: str, count: int) -> None:
        self._run("UPDATE sessions SET stop_blocks = ? WHERE id = ?", (count, session_id))

    def set_waiting(self, session_id: str, waiting: str) -> None:
        """What the live session now waits on ('' for nothing; see migration 13), from now."""
        self._run(
            "UPDATE sessions SET waiting = ?, waiting_since = ? WHERE id = ? AND ended_at IS NULL",
            (waiting, self.now() if waiting else None, session_id),
        )

    def first_read_note(self, session_id: str, path: str) -> bool:
        """Record that the session was told about ``path`` on reading it; False when it
        already was. Read first: a file read again costs no write."""
        path = redact(path)
        if self._one(
            "SELECT 1 FROM read_notes WHERE session_id = ? AND path = ?", (session_id, path)
        ):
            return False
        cursor = self._run(
            "INSERT OR IGNORE INTO read_notes(session_id, path) VALUES (?, ?)",
            (session_id, path),
        )
        return cursor.rowcount == 1

    def session_key_hash(self, session_id: str) -> str | None:
        """The hash of the session's key (:mod:`colony_tasks.base.keys`); the key is never stored."""
        row = self._one("SELECT key_hash FROM session_keys WHERE session_id = ?", (session_id,))
        return str(row[0]) if row else None

    def set_session_key_hash(self, session_id: str, key_hash: str) -> None:
        self._run(
            "INSERT OR IGNORE INTO session_keys(session_id, key_hash) VALUES (?, ?)",
            (session_id, key_hash),
        )

    def claim_event(self, key: str, at: float, window: float) -> bool:
        """Record that the event with idempotency ``key``, sent at ``at``, is being applied;
        False when the same key was sent within ``window`` seconds of ``at`` (the same event
        again: a hook installed twice, or a client that fell back after its relay had already
        applied it). Call it inside the transaction that applies the event, so both commit or
        neither does. A key sent again later than that is a new event (the agent repeated
        itself byte for byte) and takes the row over.
        """
        cursor = self._run(
            "INSERT OR IGNORE INTO hook_events(fingerprint, seen_at) VALUES (?, ?)", (key, at)
        )
        if cursor.rowcount == 1:
            return True
        cursor = self._run(
            "UPDATE hook_events SET seen_at = ? WHERE fingerprint = ? AND ABS(seen_at - ?) > ?",
            (at, key, at, window),
        )
        return cursor.rowcount == 1

    def prune_event_keys(self, older_than: float) -> int:
        """Forget idempotency keys sent before ``older_than`` (the relay does it now and then:
        a key must outlive any replay of its event, e.g. from team mode's outbox)."""
        return self._run("DELETE FROM hook_events WHERE seen_at < ?", (older_than,)).rowcount

    def end_session(self, session_id: str) -> None:
        now = self.now()
        self._run(
            "UPDATE sessions SET ended_at = ?, last_seen_at = ? WHERE id = ? AND ended_at IS NULL",
            (now, now, session_id),
        )

    def sessions_for_pid(self, agent_pid: int, machine: str = "") -> list[Session]:
        """Active sessions whose hooks ran under ``agent_pid`` on ``machine`` (process ids of
        other machines sharing a team store mean nothing here; '' is a pre-team session)."""
        rows = self._all(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE agent_pid = ? AND ended_at IS NULL"
            " AND machine IN (?, '') ORDER BY last_seen_at DESC",
            (agent_pid, machine),
        )
        return [Session(**dict(r)) for r in rows]

    def list_sessions(self, *, active_only: bool = False, limit: int = 100) -> list[Session]:
        where = "WHERE ended_at IS NULL" if active_only else ""
        rows = self._all(
            f"SELECT {SESSION_COLUMNS} FROM sessions {where} ORDER BY last_seen_at DESC LIMIT ?",
            (limit,),
        )
        return [Session(**dict(r)) for r in rows]

    def stale_open_sessions(self, before: float) -> list[Session]:
        rows = self._all(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE ended_at IS NULL AND last_seen_at < ?",
            (before,),
        )
        return [Session(**dict(r)) for r in rows]
