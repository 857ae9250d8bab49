"""SQL for tasks (shared objectives with a thread) and their participants' cursors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base.kinds import TaskMode, TaskStatus
from ..base.models import Session, Task
from ..base.redact import redact
from .base import StoreBase
from .sessions import SESSION_COLUMNS

MAX_TITLE_CHARS = 500

if TYPE_CHECKING:
    import sqlite3

TASK_COLUMNS = (
    "id, title, mode, status, lane_id, created_by, created_at, closed_at, coordinator,"
    " turn_holder, turn_seq"
)


def _task(row: sqlite3.Row | None) -> Task | None:
    return Task(**dict(row)) if row else None


class TasksMixin(StoreBase):
    # -- tasks -----------------------------------------------------------------------------

    def get_task(self, task_id: int) -> Task | None:
        return _task(self._one(f"SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?", (task_id,)))

    def open_lane_task(self, lane_id: int) -> Task | None:
        return _task(
            self._one(
                f"SELECT {TASK_COLUMNS} FROM tasks WHERE lane_id = ? AND mode = 'lane'"
                " AND status = 'open'",
                (lane_id,),
            )
        )

    def insert_task(
        self,
        title: str,
        *,
        mode: TaskMode = TaskMode.TASK,
        lane_id: int | None = None,
        created_by: str | None = None,
        coordinator: str | None = None,
    ) -> int:
        cursor = self._run(
            "INSERT INTO tasks(title, mode, status, lane_id, created_by, created_at, coordinator,"
            " turn_holder) VALUES (?, ?, 'open', ?, ?, ?, ?, ?)",
            (
                redact(title, MAX_TITLE_CHARS),
                mode,
                lane_id,
                created_by,
                self.now(),
                coordinator,
                coordinator,
            ),
        )
        return int(cursor.lastrowid or 0)

    def set_turn_holder(self, task_id: int, holder: str) -> None:
        self._run("UPDATE tasks SET turn_holder = ? WHERE id = ?", (holder, task_id))

    def next_turn(self, task_id: int) -> int:
        """Increment and return the task's turn sequence (call inside a transaction)."""
        self.lock_task(task_id)
        self._run("UPDATE tasks SET turn_seq = turn_seq + 1 WHERE id = ?", (task_id,))
        row = self._one("SELECT turn_seq FROM tasks WHERE id = ?", (task_id,))
        return int(row[0]) if row else 0

    def set_task_status(self, task_id: int, status: TaskStatus) -> None:
        closed = None if status == "open" else self.now()
        self._run(
            "UPDATE tasks SET status = ?, closed_at = ? WHERE id = ?", (status, closed, task_id)
        )

    def list_tasks(
        self, *, status: str = TaskStatus.OPEN, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Tasks with their lane and the time of their last observation, newest activity first.

        The last observation is found by id on ``observations_task`` (one index probe per
        task, whatever the task's size): ids grow with time.
        """
        where = "" if status == "all" else "WHERE t.status = ?"
        params: list[Any] = [] if status == "all" else [status]
        rows = self._all(
            f"""
            SELECT t.id, t.title, t.mode, t.status, t.lane_id, t.created_by, t.created_at,
                   t.closed_at, t.coordinator, t.turn_holder, t.turn_seq,
                   l.repo_name, l.root, l.branch,
                   (SELECT COUNT(*) FROM participants p WHERE p.task_id = t.id) AS participants,
                   COALESCE((SELECT o.created_at FROM observations o WHERE o.task_id = t.id
                             ORDER BY o.id DESC LIMIT 1),
                            t.created_at) AS last_activity
            FROM tasks t LEFT JOIN lanes l ON l.id = t.lane_id
            {where}
            ORDER BY last_activity DESC LIMIT ?
            """,
            (*params, limit),
        )
        return [dict(r) for r in rows]

    # -- participants ----------------------------------------------------------------------

    def add_participant(self, task_id: int, session_id: str, cursor: int = 0) -> bool:
        """Join idempotently; True when the session was not on the task before."""
        result = self._run(
            "INSERT OR IGNORE INTO participants(task_id, session_id, joined_at, cursor)"
            " VALUES (?, ?, ?, ?)",
            (task_id, session_id, self.now(), cursor),
        )
        return result.rowcount == 1

    def is_participant(self, task_id: int, session_id: str) -> bool:
        row = self._one(
            "SELECT 1 FROM participants WHERE task_id = ? AND session_id = ?", (task_id, session_id)
        )
        return row is not None

    def participants(self, task_id: int) -> list[Session]:
        rows = self._all(
            f"SELECT {', '.join('s.' + c.strip() for c in SESSION_COLUMNS.split(','))}"
            " FROM participants p JOIN sessions s ON s.id = p.session_id"
            " WHERE p.task_id = ? ORDER BY p.joined_at",
            (task_id,),
        )
        return [Session(**dict(r)) for r in rows]

    def tasks_of_session(self, session_id: str, *, open_only: bool = True) -> list[Task]:
        status = "AND t.status = 'open'" if open_only else ""
        rows = self._all(
            f"SELECT {', '.join('t.' + c.strip() for c in TASK_COLUMNS.split(','))}"
            f" FROM participants p JOIN tasks t ON t.id = p.task_id WHERE p.session_id = ? {status}"
            " ORDER BY t.id",
            (session_id,),
        )
        return [Task(**dict(r)) for r in rows]

    def get_cursor(self, task_id: int, session_id: str) -> int | None:
        row = self._one(
            "SELECT cursor FROM participants WHERE task_id = ? AND session_id = ?",
            (task_id, session_id),
        )
        return int(row[0]) if row else None

    def set_cursor(self, task_id: int, session_id: str, cursor: int) -> None:
        self._run(
            "UPDATE participants SET cursor = MAX(cursor, ?) WHERE task_id = ? AND session_id = ?",
            (cursor, task_id, session_id),
        )

    def counts(self) -> dict[str, int]:
        row = self._one(
            "SELECT (SELECT COUNT(*) FROM sessions) AS sessions,"
            " (SELECT COUNT(*) FROM sessions WHERE ended_at IS NULL) AS active_sessions,"
            " (SELECT COUNT(*) FROM tasks) AS tasks,"
            " (SELECT COUNT(*) FROM tasks WHERE status = 'open') AS open_tasks,"
            " (SELECT COUNT(*) FROM observations) AS observations,"
            " (SELECT COUNT(*) FROM lanes) AS lanes"
        )
        assert row is not None
        return dict(row)
