"""SQL for overviews across tasks (the web viewer): batched lookups instead of one per row."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base.models import Lane, Session
from .base import Facet
from .sessions import SESSION_COLUMNS

if TYPE_CHECKING:
    from collections.abc import Sequence

_SESSION_S = ", ".join("s." + column.strip() for column in SESSION_COLUMNS.split(","))


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


class Overview(Facet):
    """``store.overview``: the web viewer's batched reads across tasks."""

    def participants_by_task(self, task_ids: Sequence[int]) -> dict[int, list[Session]]:
        """Each task's participants in joining order, in one query."""
        if not task_ids:
            return {}
        ids = [int(i) for i in task_ids]
        rows = self.store._all(
            f"SELECT p.task_id, {_SESSION_S} FROM participants p"
            " JOIN sessions s ON s.id = p.session_id"
            f" WHERE p.task_id IN ({_marks(ids)}) ORDER BY p.task_id, p.joined_at",
            ids,
        )
        found: dict[int, list[Session]] = {i: [] for i in ids}
        for row in rows:
            values = dict(row)
            found[values.pop("task_id")].append(Session(**values))
        return found

    def lanes(self) -> dict[int, Lane]:
        rows = self.store._all("SELECT id, repo_id, root, repo_name, branch FROM lanes ORDER BY id")
        return {row["id"]: Lane(**dict(row)) for row in rows}

    def resolutions(self, obs_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """Status, resolver handle and time of waiting items (answered, accepted, withdrawn)."""
        ids = [int(i) for i in obs_ids][:1000]
        if not ids:
            return {}
        rows = self.store._all(
            "SELECT o.id, o.status, o.resolved_at, s.handle AS resolved_by FROM observations o"
            f" LEFT JOIN sessions s ON s.id = o.resolved_by WHERE o.id IN ({_marks(ids)})",
            ids,
        )
        return {row["id"]: dict(row) for row in rows}

    def open_tasks_by_session(self) -> dict[str, list[dict[str, Any]]]:
        """For every session, the open tasks it takes part in."""
        rows = self.store._all(
            "SELECT p.session_id, t.id, t.title, t.mode FROM participants p"
            " JOIN tasks t ON t.id = p.task_id WHERE t.status = 'open' ORDER BY t.id"
        )
        found: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            values = dict(row)
            found.setdefault(values.pop("session_id"), []).append(values)
        return found
