"""Tools that read the thread: tasks, timeline, updates, search, full records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from colony_tasks import search as search_mod
from colony_tasks.base.errors import InvalidInput
from colony_tasks.base.kinds import THREAD_KINDS, ObsKind
from colony_tasks.base.models import Session
from colony_tasks.base.text import iso
from colony_tasks.usecases import actions

from . import identity
from . import models as m
from .toolkit import SessionId, TaskId, state, store, tool

TIMELINE_KINDS = (*THREAD_KINDS, ObsKind.EDIT)
# The schema needs literals; tests/crosslayer/test_kinds.py checks these against colony_tasks.base.kinds.
Status = Literal["open", "done", "all"]
Kind = Literal[
    "note",
    "question",
    "answer",
    "handoff",
    "accept",
    "decision",
    "blocker",
    "claim",
    "release",
    "withdraw",
    "work",
    "edit",
    "command",
    "prompt",
]


def find(
    ctx: Context,
    queries: Sequence[str],
    *,
    limit: int,
    task_id: int | None,
    kinds: Sequence[str] | None,
) -> list[search_mod.Hit]:
    """The core's search entry point, kept per server so its vector index loads once."""
    app = state(ctx)
    if app.search is None:
        app.search = search_mod.Searcher(app.store)
    return actions.search(app.search, queries, limit=limit, task_id=task_id, kinds=kinds)


@tool(read_only=True)
def task_list(
    ctx: Context,
    status: Status = "open",
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
    session_id: SessionId = None,
) -> m.TaskList:
    """Tasks with their lane, active participants and last activity."""
    db = store(ctx)
    me = identity.maybe_caller(db, session_id)
    mine = {t.id for t in db.tasks_of_session(me.id, open_only=False)} if me else set()
    tasks = []
    for row in actions.task_list(db, status=status, limit=limit):
        tasks.append(
            m.TaskInfo(
                id=row["id"],
                title=row["title"],
                mode=row["mode"],
                status=row["status"],
                lane=row["lane"],
                root=row["root"],
                participants=[p.handle for p in db.participants(row["id"]) if p.ended_at is None],
                last_activity=iso(row["last_activity"]),
                joined=(row["id"] in mine) if me else None,
                plan=row["plan"],
            )
        )
    return m.TaskList(tasks=tasks)


@tool(read_only=True)
def task_timeline(
    ctx: Context,
    task_id: TaskId = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 30,
    before_id: Annotated[int | None, Field(ge=1)] = None,
    around_id: Annotated[int | None, Field(ge=1)] = None,
    session_id: SessionId = None,
) -> m.Timeline:
    """A task's thread, oldest first, texts clipped; page back with before_id=next_before_id;
    around_id=ID shows the items around one (where a search hit leads)."""
    db = store(ctx)
    me: Session | None
    if task_id is None:
        me = identity.caller(db, session_id)
    else:
        me = identity.maybe_caller(db, session_id)  # an unknown session_id is still an error
    task, items = actions.timeline(
        db, me, task_id, limit=limit, before_id=before_id, around_id=around_id, kinds=TIMELINE_KINDS
    )
    more = items[0].id if items and (len(items) == limit or around_id is not None) else None
    return m.Timeline(task_id=task.id, items=[m.item(o) for o in items], next_before_id=more)


@tool()
def task_updates_since(
    ctx: Context,
    task_id: TaskId = None,
    since_id: Annotated[int | None, Field(ge=0, description="Read after this id.")] = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
    session_id: SessionId = None,
) -> m.Updates:
    """What others did since you last looked; advances your cursor unless since_id is given."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    found = actions.updates_since(db, me, task_id, since_id=since_id, limit=limit)
    return m.Updates(
        task_id=found.task_id,
        items=[m.item(o) for o in found.items],
        remaining=found.remaining,
        cursor=found.cursor,
    )


@tool(read_only=True)
def search(
    ctx: Context,
    query: Annotated[str | None, Field(min_length=1)] = None,
    queries: Annotated[
        list[Annotated[str, Field(min_length=1)]] | None,
        Field(
            max_length=search_mod.MAX_PHRASINGS,
            description="Several phrasings, fused; they find more: your words, the names a"
            " teammate would have written (file paths, functions, settings, error text), a"
            " plain paraphrase.",
        ),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
    task_id: Annotated[int | None, Field(ge=1)] = None,
    kinds: list[Kind] | None = None,
    session_id: SessionId = None,
) -> m.Hits:
    """Search all agents did and said (keywords + meaning); compact hits, best first. A hit's
    next shows its context; bodies gives the full texts."""
    db = store(ctx)
    identity.maybe_caller(db, session_id)
    phrasings = [*([query] if query else []), *(queries or [])]
    if not phrasings:
        raise InvalidInput("Pass query or queries: the words to look for.")
    hits = find(ctx, phrasings, limit=limit, task_id=task_id, kinds=kinds or None)
    context = search_mod.hit_context(db, hits)
    bodies = f"get_observations(ids={[h.id for h in hits]})" if hits else None
    return m.Hits(hits=[m.hit(h, context[h.id]) for h in hits], bodies=bodies)


@tool(read_only=True)
def get_observations(
    ctx: Context,
    ids: Annotated[list[int], Field(min_length=1, max_length=100)],
    session_id: SessionId = None,
) -> m.Records:
    """Full records (text, meta) for observation ids."""
    db = store(ctx)
    identity.maybe_caller(db, session_id)
    wanted = list(dict.fromkeys(ids))
    found = db.get_observations(wanted)
    seen = {o.id for o in found}
    missing = [i for i in wanted if i not in seen]
    return m.Records(items=[m.record(o) for o in found], missing=missing)


TOOLS = (task_list, task_timeline, task_updates_since, search, get_observations)
