"""Tasks: shared objectives with a thread. Finding them, creating and joining them, and
listing them with their last activity.
"""

from __future__ import annotations

from ..base.errors import Conflict, InvalidInput, NotFound
from ..base.kinds import TASK_STATUSES, TaskMode, TaskStatus
from ..base.models import Session, Task
from ..base.text import one_line
from ..store import Store

STATUS_FILTERS: tuple[str, ...] = (*TASK_STATUSES, "all")


def get_task(store: Store, task_id: int | None) -> Task:
    task = store.get_task(int(task_id)) if task_id is not None else None
    if task is None:
        raise NotFound(f"Task {task_id} does not exist.", "list_tasks")
    return task


def default_task(store: Store, session: Session) -> Task:
    """The open lane task of the session's lane."""
    task = store.open_lane_task(session.lane_id) if session.lane_id else None
    if task is None:
        raise NotFound(
            f"Session {session.handle} has no open lane task; pass task_id.", "list_tasks"
        )
    return task


def task_for(store: Store, session: Session, task_id: int | None) -> Task:
    return default_task(store, session) if task_id is None else get_task(store, task_id)


def create_task(store: Store, title: str, *, created_by: str | None = None) -> Task:
    title = one_line(title)  # one line, fenced: every front end shows it as a name
    if not title:
        raise InvalidInput("A task needs a non-empty title.")
    with store.transaction():
        task_id = store.insert_task(title, mode=TaskMode.TASK, created_by=created_by)
        if created_by:
            store.add_participant(task_id, created_by)
    return get_task(store, task_id)


def join(store: Store, session_id: str, task_id: int) -> bool:
    """Join a task (idempotent); True when newly joined."""
    task = get_task(store, task_id)
    if task.status != TaskStatus.OPEN:
        raise Conflict(f"Task {task.id} is {task.status}; it takes no new participants.")
    return store.add_participant(task.id, session_id)


def handle_of(store: Store, session_id: str | None) -> str | None:
    """A session's handle for display (the raw reference when the session is unknown)."""
    if not session_id:
        return None
    found = store.get_session(session_id)
    return found.handle if found else session_id


def list_tasks(store: Store, *, status: str = TaskStatus.OPEN, limit: int = 50) -> list[dict]:
    """Tasks with their lane, participants count and last activity, newest activity first.

    ``status`` is a user's filter (one of :data:`STATUS_FILTERS`), checked here."""
    if status not in STATUS_FILTERS:
        raise InvalidInput(
            f"Unknown task status {status!r}; use one of {', '.join(STATUS_FILTERS)}."
        )
    rows = store.list_tasks(status=status, limit=limit)
    for row in rows:
        row["lane"] = (
            (f"{row['repo_name']}@{row['branch']}" if row["branch"] else row["repo_name"])
            if row["repo_name"]
            else None
        )
        row["coordinator"] = handle_of(store, row["coordinator"])
        row["turn_holder"] = (
            handle_of(store, row["turn_holder"]) if row["status"] == TaskStatus.OPEN else None
        )
    return rows
