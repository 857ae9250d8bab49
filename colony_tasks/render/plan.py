"""The plan block of a briefing: a task's work items in a few bounded lines, each with the
exact call that acts on it. Standard library only.
"""

from __future__ import annotations

from ..base.kinds import WorkState
from ..base.models import Session, Task, WorkItem
from ..base.text import clip, one_line
from ..domain import presence
from ..store import Store

# The plan block's bounds: items named per line, and characters per title.
PLAN_ITEMS = 3
PLAN_TITLE = 40


def _work(item: WorkItem) -> str:
    return f"#{item.id} {clip(item.title, PLAN_TITLE)}"


def _stale(item: WorkItem, now: float) -> bool:
    """Whether a shown (taken) item's owner has ended or is quiet (:func:`.presence.quiet`)."""
    return item.owner_ended_at is not None or presence.quiet(
        item.owner_seen_at, item.owner_waiting, now
    )


def plan_lines(store: Store, task: Task, me: Session, now: float) -> list[str]:
    """The task's plan in a few bounded lines: what this session owns, what is ready (with the
    exact call), who owns the rest, and stale items; nothing when the task has no plan."""
    counts = store.work_counts([task.id]).get(task.id)
    if not counts:
        return []
    summary = ", ".join(f"{counts[s]} {s}" for s in WorkState if counts.get(s))
    lines = [f"Plan ({summary}):"]
    mine = store.work_items(
        task.id, states=(WorkState.TAKEN, WorkState.BLOCKED), owner=me.id, limit=PLAN_ITEMS
    )
    if mine:
        lines.append(
            "- You own "
            + "; ".join(
                _work(i)
                + (f" ({one_line(', '.join(i.files[:2]))})" if i.files else "")
                + (" [blocked]" if i.state == WorkState.BLOCKED else "")
                for i in mine
            )
            + f' → finish_work(item_id={mine[0].id}, summary="...") when done.'
        )
    ready = store.work_items(task.id, ready=True, limit=PLAN_ITEMS + 1)
    if ready:
        more = " …" if len(ready) > PLAN_ITEMS else ""
        lines.append(
            f"- Ready: {'; '.join(_work(i) for i in ready[:PLAN_ITEMS])}{more}"
            f" → take_work(item_id={ready[0].id}) or take_work() for the next."
        )
    taken = [
        i
        for i in store.work_items(task.id, states=(WorkState.TAKEN,), limit=12)
        if i.owner != me.id
    ]
    live = [i for i in taken if not _stale(i, now)]
    stale = [i for i in taken if _stale(i, now)]
    if live:
        lines.append(
            "- Others: "
            + "; ".join(f"{i.owner_handle} on {_work(i)}" for i in live[:PLAN_ITEMS])
            + (f"; +{len(live) - PLAN_ITEMS} more" if len(live) > PLAN_ITEMS else "")
        )
    if stale:
        lines.append(
            "- Stale (owner ended, quiet 30m+ or cut off): "
            + "; ".join(f"{_work(i)} ({i.owner_handle})" for i in stale[:PLAN_ITEMS])
            + " — a human or the planner can reassign it."
        )
    return lines
