"""SQL for plans: work items of a task, their dependencies, and who waits for ready work.

An item is *ready* when it is open and every item it depends on is done or dropped
(:data:`READY`). Taking is a conditional update (``state`` must still allow it), run by the
caller inside ``BEGIN IMMEDIATE``, so two sessions can never take one item.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..base.models import WorkItem
from ..base.redact import redact
from .base import StoreBase

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

WORK_COLUMNS = (
    "w.id, w.task_id, w.title, w.description, w.files, w.state, w.owner, s.handle AS owner_handle,"
    " w.reason, w.summary, w.created_by, w.created_at, w.taken_at, w.finished_at,"
    " s.last_seen_at AS owner_seen_at, s.ended_at AS owner_ended_at,"
    " COALESCE(s.waiting, '') AS owner_waiting"
)
WORK_FROM = "work_items w LEFT JOIN sessions s ON s.id = w.owner"
# Open, and nothing it depends on is still to do.
READY = (
    "w.state = 'open' AND NOT EXISTS (SELECT 1 FROM work_deps d"
    " JOIN work_items p ON p.id = d.depends_on"
    " WHERE d.item_id = w.id AND p.state NOT IN ('done', 'dropped'))"
)


def _files(raw: str | None) -> list[str]:
    try:
        value = json.loads(raw or "[]")
    except ValueError:
        return []
    return [f for f in value if isinstance(f, str)] if isinstance(value, list) else []


class WorkMixin(StoreBase):
    # -- reading ---------------------------------------------------------------------------

    def _work(self, rows: list[sqlite3.Row]) -> list[WorkItem]:
        ids = [r["id"] for r in rows]
        deps: dict[int, list[int]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for item_id, dep in self._all(
                f"SELECT item_id, depends_on FROM work_deps WHERE item_id IN ({marks})"
                " ORDER BY depends_on",
                chunk,
            ):
                deps.setdefault(item_id, []).append(dep)
        return [
            WorkItem(
                **{
                    **dict(r),
                    "files": _files(r["files"]),
                    "depends_on": tuple(deps.get(r["id"], ())),
                }
            )
            for r in rows
        ]

    def work_item(self, item_id: int) -> WorkItem | None:
        rows = self._all(f"SELECT {WORK_COLUMNS} FROM {WORK_FROM} WHERE w.id = ?", (item_id,))
        found = self._work(rows)
        return found[0] if found else None

    def work_items(
        self,
        task_id: int,
        *,
        states: Sequence[str] | None = None,
        owner: str | None = None,
        ready: bool = False,
        limit: int = 100_000,
    ) -> list[WorkItem]:
        """A task's items in plan order, optionally only some states, one owner's, or ready."""
        where = ["w.task_id = ?"]
        params: list[Any] = [task_id]
        if states is not None:
            where.append(f"w.state IN ({','.join('?' * len(states)) or 'NULL'})")
            params.extend(states)
        if owner is not None:
            where.append("w.owner = ?")
            params.append(owner)
        if ready:
            where.append(READY)
        rows = self._all(
            f"SELECT {WORK_COLUMNS} FROM {WORK_FROM} WHERE {' AND '.join(where)}"
            " ORDER BY w.id LIMIT ?",
            (*params, limit),
        )
        return self._work(rows)

    def work_ids_in_task(self, task_id: int, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        marks = ",".join("?" * len(ids))
        rows = self._all(
            f"SELECT id FROM work_items WHERE task_id = ? AND id IN ({marks})", (task_id, *ids)
        )
        return {r[0] for r in rows}

    def next_ready_work(self, task_id: int) -> int | None:
        row = self._one(
            f"SELECT w.id FROM work_items w WHERE w.task_id = ? AND {READY} ORDER BY w.id LIMIT 1",
            (task_id,),
        )
        return int(row[0]) if row else None

    def work_is_ready(self, item_id: int) -> bool:
        return (
            self._one(f"SELECT 1 FROM work_items w WHERE w.id = ? AND {READY}", (item_id,))
            is not None
        )

    def unfinished_deps(self, item_id: int) -> list[WorkItem]:
        rows = self._all(
            f"SELECT {WORK_COLUMNS} FROM work_deps d JOIN work_items w ON w.id = d.depends_on"
            " LEFT JOIN sessions s ON s.id = w.owner"
            " WHERE d.item_id = ? AND w.state NOT IN ('done', 'dropped') ORDER BY w.id",
            (item_id,),
        )
        return self._work(rows)

    def ready_dependents(self, item_id: int) -> list[WorkItem]:
        """Items waiting on ``item_id`` that are ready now."""
        rows = self._all(
            f"SELECT {WORK_COLUMNS} FROM work_deps x JOIN work_items w ON w.id = x.item_id"
            f" LEFT JOIN sessions s ON s.id = w.owner WHERE x.depends_on = ? AND {READY}"
            " ORDER BY w.id",
            (item_id,),
        )
        return self._work(rows)

    def work_counts(self, task_ids: Sequence[int]) -> dict[int, dict[str, int]]:
        """Per task, how many items are in each state (tasks without a plan are left out)."""
        if not task_ids:
            return {}
        marks = ",".join("?" * len(task_ids))
        out: dict[int, dict[str, int]] = {}
        for task_id, state, count in self._all(
            f"SELECT task_id, state, COUNT(*) FROM work_items WHERE task_id IN ({marks})"
            " GROUP BY task_id, state",
            list(task_ids),
        ):
            out.setdefault(task_id, {})[state] = count
        return out

    def has_plan(self, task_id: int) -> bool:
        return (
            self._one("SELECT 1 FROM work_items WHERE task_id = ? LIMIT 1", (task_id,)) is not None
        )

    def stale_work(self, seen_before: float, *, limit: int = 200) -> list[WorkItem]:
        """Taken items whose owner has ended or not been seen since ``seen_before``."""
        rows = self._all(
            f"SELECT {WORK_COLUMNS} FROM {WORK_FROM} WHERE w.state = 'taken'"
            " AND (s.id IS NULL OR s.ended_at IS NOT NULL OR s.last_seen_at < ?)"
            " ORDER BY w.id LIMIT ?",
            (seen_before, limit),
        )
        return self._work(rows)

    # -- writing (callers hold the transaction) ----------------------------------------------

    def insert_work_item(
        self,
        task_id: int,
        title: str,
        *,
        description: str = "",
        files: Sequence[str] = (),
        created_by: str | None = None,
    ) -> int:
        cursor = self._run(
            "INSERT INTO work_items(task_id, title, description, files, state, created_by,"
            " created_at) VALUES (?, ?, ?, ?, 'open', ?, ?)",
            (
                task_id,
                redact(title),
                redact(description),
                json.dumps([redact(f) for f in files], ensure_ascii=False),
                created_by,
                self.now(),
            ),
        )
        return int(cursor.lastrowid or 0)

    def add_work_deps(self, item_id: int, depends_on: Sequence[int]) -> None:
        self.conn.executemany(
            "INSERT OR IGNORE INTO work_deps(item_id, depends_on) VALUES (?, ?)",
            [(item_id, dep) for dep in depends_on],
        )

    def take_work_item(self, item_id: int, session_id: str) -> bool:
        """Give an open or blocked item to ``session_id``; False when it was not available."""
        cursor = self._run(
            "UPDATE work_items SET state = 'taken', owner = ?, taken_at = ?, reason = NULL"
            " WHERE id = ? AND state IN ('open', 'blocked')",
            (session_id, self.now(), item_id),
        )
        return cursor.rowcount == 1

    def finish_work_item(
        self, item_id: int, state: str, *, summary: str | None, reason: str | None
    ) -> None:
        self._run(
            "UPDATE work_items SET state = ?, summary = ?, reason = ?, finished_at = ?"
            " WHERE id = ?",
            (
                state,
                redact(summary) if summary else None,
                redact(reason) if reason else None,
                self.now(),
                item_id,
            ),
        )

    def assign_work_item(self, item_id: int, owner: str | None) -> None:
        """Give a taken item to another owner, or (``owner`` None) put it back to open."""
        if owner is None:
            self._run(
                "UPDATE work_items SET state = 'open', owner = NULL, taken_at = NULL WHERE id = ?",
                (item_id,),
            )
        else:
            self._run(
                "UPDATE work_items SET state = 'taken', owner = ?, taken_at = ?, reason = NULL"
                " WHERE id = ?",
                (owner, self.now(), item_id),
            )

    # -- waiting for ready work ------------------------------------------------------------

    def add_work_waiter(self, task_id: int, session_id: str) -> None:
        self._run(
            "INSERT OR IGNORE INTO work_waiters(task_id, session_id, since) VALUES (?, ?, ?)",
            (task_id, session_id, self.now()),
        )

    def remove_work_waiter(self, task_id: int, session_id: str) -> None:
        self._run(
            "DELETE FROM work_waiters WHERE task_id = ? AND session_id = ?", (task_id, session_id)
        )

    def pop_work_waiters(self, task_id: int) -> list[str]:
        """The sessions waiting for ready work in a task (live ones), removed from the list."""
        rows = self._all(
            "SELECT w.session_id FROM work_waiters w JOIN sessions s ON s.id = w.session_id"
            " WHERE w.task_id = ? AND s.ended_at IS NULL ORDER BY w.since",
            (task_id,),
        )
        self._run("DELETE FROM work_waiters WHERE task_id = ?", (task_id,))
        return [r[0] for r in rows]
