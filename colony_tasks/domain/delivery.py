"""Delivery: what each session has not been given yet, exactly once.

Each participant has a cursor (the highest observation id of the task it has been given).
:func:`updates_since` advances it in the same ``BEGIN IMMEDIATE`` transaction that reads, so
two concurrent readers for one session never get the same item. Directed and urgent items can
be delivered mid-turn (:func:`deliver_directed`); they are then not repeated at the next
prompt. A chain turn block carries the history a session needs, so what it contains is folded.
"""

from __future__ import annotations

from ..base.errors import InvalidInput
from ..base.globs import matches
from ..base.kinds import THREAD_KINDS, ItemStatus, ObsKind, TaskMode
from ..base.models import Observation, Record, Session, Task
from ..store import Store
from .tasks import task_for

TOUCHED_WINDOW = 24 * 3600
# What a prompt is given of each task's news at most (the rest: task_updates_since).
NEWS_ITEMS = 12


class Updates(Record):
    """Items not yet given to a reader; ``remaining`` are left for the next call."""

    task_id: int
    items: list[Observation]
    remaining: int
    cursor: int


def _touched(store: Store, session: Session) -> dict[str, str | None]:
    """Paths this session edited lately and patterns it holds, each with its stored regex."""
    lane = store.get_lane(session.lane_id) if session.lane_id else None
    if lane is None:
        return {}
    since = store.now() - TOUCHED_WINDOW
    touched: dict[str, str | None] = dict.fromkeys(
        store.touched_paths(session.id, lane.repo_id, since)
    )
    touched.update((c["pattern"], c["regex"]) for c in store.list_claims(session_id=session.id))
    return touched


def _relevant(
    store: Store, session: Session, rows: list[Observation], *, skip_delivered: bool = True
) -> list[Observation]:
    """Thread messages by others, plus others' edits of files this session touched, plus the
    interface changes addressed to this session (see :mod:`colony_tasks.depgraph.interface_changes`; they concern
    only the sessions whose files import the changed module).

    Items already delivered mid-turn (see :func:`deliver_directed`) are not repeated.
    """
    mine = [o.id for o in rows if o.session_id != session.id]
    already = store.recipient_of(session.id, mine, delivered=True) if skip_delivered else set()
    others = [o for o in rows if o.session_id != session.id and o.id not in already]
    edits = [o for o in others if o.kind == ObsKind.EDIT]
    keep_edits: set[int] = set()
    if edits:
        touched = _touched(store, session)
        if touched:
            by_obs = store.observation_paths([e.id for e in edits])
            for edit in edits:
                paths = by_obs.get(edit.id, [])
                if any(matches(t, p, rx) for p in paths for t, rx in touched.items()):
                    keep_edits.add(edit.id)
    notices = [o.id for o in others if o.kind == ObsKind.INTERFACE]
    mine_notices = store.recipient_of(session.id, notices) if notices else set()
    return [
        o
        for o in others
        if (o.kind != ObsKind.EDIT or o.id in keep_edits)
        and (o.kind != ObsKind.INTERFACE or o.id in mine_notices)
    ]


def _is_my_turn(obs: Observation, session: Session) -> bool:
    return (
        obs.kind == ObsKind.TURN and obs.to is not None and obs.to in (session.handle, session.id)
    )


def _fold_turns(items: list[Observation], session: Session) -> list[Observation]:
    """Drop chain messages that a turn block addressed to this session already contains."""
    turns = [o for o in items if _is_my_turn(o, session)]
    if not turns:
        return items
    last = turns[-1]
    since = int(last.meta.get("since") or 0)
    return [o for o in items if not (o.task_id == last.task_id and since < o.id < last.id)]


def updates_since(
    store: Store,
    session: Session,
    task_id: int | None = None,
    *,
    since_id: int | None = None,
    limit: int | None = None,
) -> Updates:
    """What ``reader`` has not been given yet, oldest first, excluding its own items.

    Without ``since_id`` the participant cursor advances in the same ``BEGIN IMMEDIATE``
    transaction, so two concurrent callers for one session never receive the same item. With
    ``since_id`` it only reads. ``limit`` delivers the first items and leaves the rest (counted
    in ``remaining``) for the next call.
    """
    if limit is not None and limit < 1:
        raise InvalidInput("limit must be at least 1.")
    with store.transaction():
        return _updates(store, session, task_for(store, session, task_id), since_id, limit)


def news(store: Store, session: Session) -> tuple[Updates, ...]:
    """What is new for the session in each of its open tasks since it was last told (at most
    :data:`NEWS_ITEMS` per task; advances its cursors)."""
    return tuple(
        _updates(store, session, task, None, NEWS_ITEMS)
        for task in store.tasks_of_session(session.id)
    )


def _updates(
    store: Store, session: Session, task: Task, since_id: int | None, limit: int | None
) -> Updates:
    """:func:`updates_since` of a task already read."""
    kinds = (*THREAD_KINDS, ObsKind.EDIT)
    with store.transaction():
        reader_only = task.mode == TaskMode.CHAIN and not store.is_participant(task.id, session.id)
        if since_id is None and reader_only:
            since_id = 0  # reading a chain never joins it: only its coordinator adds
        if since_id is not None:
            rows = store.observations_after(task.id, int(since_id), kinds=kinds, limit=5000)
            items = _relevant(store, session, rows, skip_delivered=False)
            shown = items[:limit] if limit else items
            return Updates(task.id, shown, len(items) - len(shown), int(since_id))
        store.add_participant(task.id, session.id)
        cursor = store.get_cursor(task.id, session.id) or 0
        rows = store.observations_after(task.id, cursor, kinds=kinds, limit=5000)
        items = _fold_turns(_relevant(store, session, rows), session)
        if limit and len(items) > limit:
            shown, remaining = items[:limit], len(items) - limit
            new_cursor = shown[-1].id
        else:
            shown, remaining = items, 0
            new_cursor = rows[-1].id if rows else cursor
        if new_cursor > cursor:
            store.set_cursor(task.id, session.id, new_cursor)
        store.mark_delivered(session.id, [o.id for o in shown])
        return Updates(task.id, shown, remaining, new_cursor)


def mark_briefed(store: Store, session: Session, task_id: int) -> None:
    """The session was just briefed on the task (SessionStart): its history is not repeated
    as news; only what comes after is delivered. Pending items stay in :func:`pending_for`."""
    with store.transaction():
        store.set_cursor(task_id, session.id, store.max_observation_id(task_id))


def deliver_directed(
    store: Store, session: Session, *, pending: bool | None = None
) -> list[Observation]:
    """Mid-turn delivery: undelivered items addressed to the session or marked urgent.

    They are marked delivered, so the next :func:`updates_since` does not repeat them.
    ``pending``: whether any is waiting, when the caller already asked (``store.inbox``).
    """
    if not (store.inbox(session.id).directed if pending is None else pending):
        return []
    with store.transaction():
        items = store.pending_directed(session.id)
        store.mark_delivered(session.id, [o.id for o in items])
        after_directed(store, session, items)
    return items


def after_directed(store: Store, session: Session, items: list[Observation]) -> None:
    """Directed items were just delivered (mid-turn, or by waking the session): a turn block
    carries the chain's history, so it is not delivered again piecemeal."""
    for turn in (o for o in items if _is_my_turn(o, session)):
        store.set_cursor(int(turn.task_id or 0), session.id, turn.id - 1)


def pending_for(store: Store, session: Session, task_id: int | None = None) -> list[Observation]:
    """Questions and handoffs waiting on this session (addressed to it, its kind, or anyone)."""
    task_ids = (
        [task_id] if task_id is not None else [t.id for t in store.tasks_of_session(session.id)]
    )
    return store.open_items(
        kinds=(ObsKind.QUESTION, ObsKind.HANDOFF),
        statuses=(ItemStatus.PENDING,),
        task_ids=task_ids,
        exclude_author=session.id,
        to_any_of=(session.handle, session.agent),  # handles, never ids (addressed_to)
    )
