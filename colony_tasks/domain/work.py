"""Work items: a planned item taken atomically, finished, reassigned or dropped.

Every rule of an item's life lives here (planning it is :mod:`colony_tasks.domain.planning`);
the MCP tools, the CLI and the viewer reach it through :mod:`colony_tasks.usecases.actions`:

- taking, finishing, reassigning and dropping are posts like any other: on a chain they need
  the turn (:func:`colony_tasks.domain.chains.check_writable`);
- an item is *ready* when it is open and everything it depends on is done or dropped;
  :func:`take` hands out one item per call inside ``BEGIN IMMEDIATE``, so two sessions never
  get the same one. Taking claims the item's files for the taker (ordinary claims, so edit
  warnings apply) and reports who else holds them;
- only the owner, or a human, finishes an item (done, blocked with a reason, dropped);
  finishing releases the item's claims and announces the items it made ready: one ``work``
  thread item every participant receives once, addressed to the session that asked for work
  when none was ready (urgent to all when several did);
- a human, the item's planner or a chain's coordinator reassigns a taken item (the stuck-agent
  move: an owner that ended or has been quiet past :data:`STALE_AFTER` is flagged as stale) or
  drops it.

Every change is also a ``work`` thread item (:func:`announce`), so the plan's progress is in
every delta.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base.errors import Conflict, InvalidInput, NotAllowed, NotFound
from ..base.globs import matches
from ..base.kinds import FINISH_STATES, AgentKind, ObsKind, WorkState
from ..base.models import Lane, Record, Session, Task, WorkItem
from ..base.text import ago, clip
from ..store import Store
from . import chains, presence
from . import claims as claims_mod
from .messages import check_text
from .sessions import find_session
from .tasks import get_task, handle_of, task_for

WORK_TTL_MINUTES = 24 * 60  # an item's claims last as long as a working day, or until finished
STALE_AFTER = claims_mod.STALE_AFTER
TITLE_IN_TEXT = 60


class Taken(Record):
    """The item taken (None when nothing was ready: ``message`` says why) with its claims."""

    item: WorkItem | None
    granted: Sequence[dict[str, Any]] = ()
    conflicts: Sequence[claims_mod.PathConflict] = ()
    message: str | None = None


class Finished(Record):
    """The finished item, the claims released, and the items it made ready."""

    item: WorkItem
    released: list[str]
    ready: list[WorkItem]


class Board(Record):
    """A task's plan: every item in plan order, counts per state, ready and stale item ids."""

    task_id: int
    title: str
    items: list[WorkItem]
    counts: dict[str, int]
    ready: list[int]
    stale: list[int]


# -- reading --------------------------------------------------------------------------------


def get_item(store: Store, item_id: int, task_id: int | None = None) -> WorkItem:
    """The item, which must belong to ``task_id`` when one is given (an item is named by a
    task's page or thread)."""
    item = store.work_item(int(item_id))
    if task_id is not None and (item is None or item.task_id != task_id):
        raise NotFound(f"Task {task_id} has no work item #{item_id}.", "plan_show")
    if item is None:
        raise NotFound(f"Work item #{item_id} does not exist.", "plan_show")
    return item


def is_stale(item: WorkItem, now: float) -> bool:
    """A taken item whose owner has ended or been quiet past :data:`STALE_AFTER`."""
    if item.state != WorkState.TAKEN:
        return False
    if item.owner_ended_at is not None:
        return True
    return presence.quiet(item.owner_seen_at, item.owner_waiting, now)


def stale_note(item: WorkItem, now: float) -> str:
    """``codex-91bc ended`` / ``codex-91bc quiet 45m ago``."""
    who = item.owner_handle or item.owner or "?"
    if item.owner_ended_at is not None or item.owner_seen_at is None:
        return f"{who} ended"
    return f"{who} quiet since {ago(item.owner_seen_at, now)}"


def board(store: Store, task_id: int) -> Board:
    task = get_task(store, task_id)
    items = store.work_items(task.id)
    now = store.now()
    counts = {state.value: 0 for state in WorkState}
    for item in items:
        counts[item.state] = counts.get(item.state, 0) + 1
    ready = [i.id for i in store.work_items(task.id, ready=True)]
    stale = [i.id for i in items if is_stale(i, now)]
    return Board(task.id, task.title, items, counts, ready, stale)


def files_lane(store: Store, session: Session, task: Task) -> Lane | None:
    """Where an item's files are: the acting session's repository, else the task's."""
    if session.lane_id:
        lane = store.get_lane(session.lane_id)
        if lane is not None:
            return lane
    return store.get_lane(task.lane_id) if task.lane_id else None


# -- taking ---------------------------------------------------------------------------------


def _why_not_ready(store: Store, item: WorkItem) -> str:
    waits = store.unfinished_deps(item.id)
    names = ", ".join(
        f"#{d.id} {clip(d.title, 40)} ({d.state}{' by ' + d.owner_handle if d.owner_handle else ''})"
        for d in waits[:5]
    )
    return f"Item #{item.id} is not ready: it waits on {names}."


def take(
    store: Store, session: Session, item_id: int | None = None, *, task_id: int | None = None
) -> Taken:
    """Take ``item_id``, or the next ready item of the task; claims its files for the taker."""
    with store.transaction():
        if item_id is not None:
            item = get_item(store, item_id)
            task = get_task(store, item.task_id)
        else:
            task = task_for(store, session, task_id)
        chains.check_writable(store, task, session)
        store.add_participant(task.id, session.id)
        if item_id is None:
            found = store.next_ready_work(task.id)
            if found is None:
                return Taken(None, message=_nothing_ready(store, task, session))
            item = get_item(store, found)
        elif item.owner == session.id and item.state == WorkState.TAKEN:
            pass
        elif item.state == WorkState.TAKEN and presence.takeable(
            item.owner_waiting, item.owner_seen_at, store.now()
        ):
            # Its owner was cut off (rate limit, overloaded API) past the grace period.
            store.assign_work_item(item.id, session.id)
            granted, found_conflicts = _claim_files(store, session, task, item)
            chains.insert(
                store,
                task,
                session,
                ObsKind.WORK,
                f"took #{item.id} {clip(item.title, TITLE_IN_TEXT)} from {item.owner_handle}"
                " (cut off)",
                meta={"event": "take", "item": item.id, "files": item.files, "from": item.owner},
            )
            return Taken(get_item(store, item.id), granted, found_conflicts)
        elif item.state == WorkState.TAKEN:
            raise Conflict(f"Item #{item.id} is taken by {item.owner_handle}.", "take_next")
        elif item.state in (WorkState.DONE, WorkState.DROPPED):
            raise Conflict(f"Item #{item.id} is {item.state}.")
        elif item.state == WorkState.OPEN and not store.work_is_ready(item.id):
            raise Conflict(_why_not_ready(store, item), "take_next")
        renewal = item.state == WorkState.TAKEN  # already the caller's: renew its claims
        if not renewal and not store.take_work_item(item.id, session.id):
            raise Conflict(f"Item #{item.id} was just taken by someone else.")
        store.remove_work_waiter(task.id, session.id)
        granted, found_conflicts = _claim_files(store, session, task, item)
        if renewal:
            return Taken(item, granted, found_conflicts)
        owns = f" (owns {', '.join(item.files[:4])}{' …' if len(item.files) > 4 else ''})"
        chains.insert(
            store,
            task,
            session,
            ObsKind.WORK,
            f"took #{item.id} {clip(item.title, TITLE_IN_TEXT)}" + (owns if item.files else ""),
            meta={"event": "take", "item": item.id, "files": item.files},
        )
        return Taken(get_item(store, item.id), granted, found_conflicts)


def _nothing_ready(store: Store, task: Task, session: Session) -> str:
    waiting = store.work_items(task.id, states=(WorkState.OPEN,), limit=3)
    if not waiting:
        taken = store.work_items(task.id, states=(WorkState.TAKEN, WorkState.BLOCKED), limit=1)
        if not taken:
            return (
                f"Task {task.id} has no open work items. Plan some with"
                ' plan_work(items=[{"title": ...}]).'
            )
        return f"Every item of task {task.id} is taken or finished; nothing is left to take."
    store.add_work_waiter(task.id, session.id)
    return (
        f"Nothing in task {task.id} is ready yet. {_why_not_ready(store, waiting[0])} You will be"
        " told when an item is ready."
    )


def _claim_files(
    store: Store, session: Session, task: Task, item: WorkItem
) -> tuple[list[dict[str, Any]], list[claims_mod.PathConflict]]:
    lane = files_lane(store, session, task)
    if not item.files or lane is None:
        return [], []
    found = claims_mod.conflicts_for(store, session, item.files, lane)
    granted = claims_mod.grant(
        store,
        session,
        item.files,
        lane,
        task_id=task.id,
        ttl_minutes=WORK_TTL_MINUTES,
        note=f"work #{item.id}: {clip(item.title, 40)}",
    )
    return granted, found


def _release_files(store: Store, item: WorkItem) -> list[str]:
    """Release the owner's claims on the item's files and on what it edited under them."""
    if not item.owner or not item.files:
        return []
    held = store.list_claims(session_id=item.owner, include_expired=True)
    patterns = [
        c["pattern"]
        for c in held
        if c["pattern"] in item.files
        or (c["auto"] and any(matches(f, c["pattern"]) for f in item.files))
    ]
    return [r["pattern"] for r in store.release_claims(item.owner, patterns=patterns)]


# -- finishing, reassigning, dropping -------------------------------------------------------


def finish(
    store: Store,
    session: Session,
    item_id: int,
    summary: str,
    *,
    state: str = WorkState.DONE,
    reason: str | None = None,
) -> Finished:
    """The owner (or a human) finishes a taken item: done, blocked (with a reason) or dropped."""
    if state not in FINISH_STATES:
        raise InvalidInput(f"Finish an item as one of {', '.join(FINISH_STATES)}, not {state!r}.")
    summary = check_text(summary, "summary")
    reason = (reason or "").strip() or None
    if state == WorkState.BLOCKED and reason is None:
        raise InvalidInput("A blocked item needs a reason: what it waits for.")
    with store.transaction():
        item = get_item(store, item_id)
        task = get_task(store, item.task_id)
        chains.check_writable(store, task, session)
        if item.state != WorkState.TAKEN:
            raise Conflict(f"Item #{item.id} is {item.state}; only a taken item is finished.")
        if item.owner != session.id and session.agent != AgentKind.HUMAN:
            raise NotAllowed(
                f"Item #{item.id} is {item.owner_handle}'s; only its owner or a human can finish it."
            )
        return _close(store, task, session, item, WorkState(state), summary, reason)


def drop(
    store: Store,
    session: Session,
    item_id: int,
    reason: str | None = None,
    *,
    task_id: int | None = None,
) -> Finished:
    """Drop an item that will not be done (its owner, a human, or its planner)."""
    with store.transaction():
        item = get_item(store, item_id, task_id)
        task = get_task(store, item.task_id)
        chains.check_writable(store, task, session)
        if item.owner != session.id:
            _check_manager(store, task, item, session, "drop")
        if item.state in (WorkState.DONE, WorkState.DROPPED):
            raise Conflict(f"Item #{item.id} is already {item.state}.")
        text = (reason or "").strip() or "no longer needed"
        return _close(store, task, session, item, WorkState.DROPPED, text, None)


def _close(
    store: Store,
    task: Task,
    session: Session,
    item: WorkItem,
    state: WorkState,
    summary: str,
    reason: str | None,
) -> Finished:
    store.finish_work_item(item.id, state, summary=summary, reason=reason)
    released = _release_files(store, item) if item.state == WorkState.TAKEN else []
    ready = store.ready_dependents(item.id) if state != WorkState.BLOCKED else []
    verb = {WorkState.DONE: "finished", WorkState.BLOCKED: "blocked", WorkState.DROPPED: "dropped"}
    detail = f"{clip(summary, 300)}" + (f" — waits for: {clip(reason, 200)}" if reason else "")
    by = "" if item.owner in (None, session.id) else f" (owner {item.owner_handle})"
    text = f"{verb[state]} #{item.id} {clip(item.title, TITLE_IN_TEXT)}{by}: {detail}"
    announce(
        store,
        task,
        session,
        text,
        [i.id for i in ready],
        {"event": state.value, "item": item.id},
    )
    return Finished(get_item(store, item.id), released, ready)


def _check_manager(store: Store, task: Task, item: WorkItem, session: Session, what: str) -> None:
    if session.agent == AgentKind.HUMAN or session.id in (item.created_by, task.coordinator):
        return
    planner = handle_of(store, item.created_by) or "its planner"
    raise NotAllowed(
        f"Only a human or the planner ({planner}) can {what} item #{item.id}, not {session.handle}."
    )


def reassign(
    store: Store,
    session: Session,
    item_id: int,
    to: str | None = None,
    *,
    task_id: int | None = None,
) -> WorkItem:
    """Give a taken or blocked item to ``to`` (its files' claims move too), or with ``to``
    None put it back to open for anyone to take. A human, the planner or the coordinator."""
    with store.transaction():
        item = get_item(store, item_id, task_id)
        task = get_task(store, item.task_id)
        chains.check_writable(store, task, session)
        _check_manager(store, task, item, session, "reassign")
        if item.state not in (WorkState.TAKEN, WorkState.BLOCKED, WorkState.OPEN):
            raise Conflict(f"Item #{item.id} is {item.state}; only unfinished items move.")
        target = find_session(store, to) if to else None
        if target is not None and target.ended_at is not None:
            raise Conflict(f"Session {target.handle} has ended; reassign to an active session.")
        if target is not None and target.id == item.owner:
            raise InvalidInput(f"Item #{item.id} is already {target.handle}'s.")
        now = store.now()
        was = (
            f" from {item.owner_handle}"
            + (f" ({stale_note(item, now)})" if is_stale(item, now) else "")
            if item.owner
            else ""
        )
        if item.state == WorkState.TAKEN:
            _release_files(store, item)
        title = clip(item.title, TITLE_IN_TEXT)
        if target is None:
            store.assign_work_item(item.id, None)
            ready = [item.id] if store.work_is_ready(item.id) else []
            announce(
                store,
                task,
                session,
                f"reopened #{item.id} {title}{was}",
                ready,
                {"event": "reopen", "item": item.id},
            )
            return get_item(store, item.id)
        store.add_participant(task.id, target.id)
        store.assign_work_item(item.id, target.id)
        moved = get_item(store, item.id)
        _claim_files(store, target, task, moved)
        chains.insert(
            store,
            task,
            session,
            ObsKind.WORK,
            f"reassigned #{item.id} {title}{was} to {target.handle}",
            to=target.handle if target.id != session.id else None,
            meta={"event": "reassign", "item": item.id, "to": target.handle},
        )
        return get_item(store, item.id)


# -- announcing -----------------------------------------------------------------------------


def announce(
    store: Store,
    task: Task,
    session: Session,
    text: str,
    ready: Sequence[int],
    meta: dict[str, Any],
) -> None:
    """One ``work`` thread item every participant receives once. When it makes items ready and
    sessions asked for work while none was, it is addressed to the one that asked (mid-turn),
    or urgent for everyone when several did."""
    to = None
    urgent = False
    if ready:
        items = [store.work_item(i) for i in ready]
        calls = "; ".join(
            f"#{i.id} {clip(i.title, TITLE_IN_TEXT)} → take_work(item_id={i.id})"
            for i in items[:5]
            if i is not None
        )
        more = f" (+{len(ready) - 5} more)" if len(ready) > 5 else ""
        text = f"{text}. Ready now: {calls}{more}"
        waiters = [w for w in store.pop_work_waiters(task.id) if w != session.id]
        if len(waiters) == 1:
            to = handle_of(store, waiters[0])
        elif waiters:
            urgent = True
    chains.insert(
        store,
        task,
        session,
        ObsKind.WORK,
        text,
        to=to,
        urgent=urgent,
        meta={**meta, "ready": list(ready)},
    )
