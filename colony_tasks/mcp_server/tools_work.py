"""Tools for plans: divide a task into owned work items, take the next ready one, finish it.

Every rule (dependencies, atomic taking, who may finish, what is announced) is in
:mod:`colony_tasks.domain.planning` and :mod:`colony_tasks.domain.work`; these tools only
translate arguments and results. The plan is read
through ``task_list`` (counts per state) and ``task_timeline`` (``work`` items).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from colony_tasks.usecases import actions

from . import identity
from . import models as m
from .toolkit import SessionId, TaskId, store, tool

ItemId = Annotated[int, Field(ge=1)]


class PlanItem(BaseModel):
    title: Annotated[str, Field(min_length=1, max_length=200)]
    files: list[str] | None = None
    depends_on: Annotated[
        list[int | str] | None, Field(description='Index in this call, or "#id".')
    ] = None
    description: str | None = None


class Planned(BaseModel):
    task_id: int
    ids: list[int]
    ready: list[int]


class WorkOut(BaseModel):
    id: int
    title: str
    state: str
    owner: str | None = None
    files: list[str] | None = None
    depends_on: list[int] | None = None


class Taken(BaseModel):
    item: WorkOut | None = None
    claims: list[m.Claim] | None = None
    conflicts: list[m.Conflict] | None = None
    message: str | None = None


class Finished(BaseModel):
    item: WorkOut
    released: list[str]
    ready: list[int]


def work_out(item: Any) -> WorkOut:
    return WorkOut(
        id=item.id,
        title=item.title,
        state=item.state,
        owner=item.owner_handle,
        files=list(item.files) or None,
        depends_on=list(item.depends_on) or None,
    )


@tool()
def plan_work(
    ctx: Context,
    items: Annotated[list[PlanItem], Field(min_length=1, max_length=100)],
    task_id: TaskId = None,
    session_id: SessionId = None,
) -> Planned:
    """Add work items (owned files, dependencies) to a task's plan; returns ids, ready ones."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    specs = [i.model_dump(exclude_none=True) for i in items]
    planned = actions.plan_work(db, me, specs, task_id=task_id)
    return Planned(task_id=planned.task_id, ids=planned.ids, ready=planned.ready)


@tool()
def take_work(
    ctx: Context,
    item_id: Annotated[int | None, Field(ge=1, description="Default: next ready.")] = None,
    task_id: TaskId = None,
    session_id: SessionId = None,
) -> Taken:
    """Take a work item atomically and claim its files; reports files others hold."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    taken = actions.take_work(db, me, item_id, task_id=task_id)
    if taken.item is None:
        return Taken(message=taken.message)
    return Taken(
        item=work_out(taken.item),
        claims=[m.claim(c) for c in taken.granted] or None,
        conflicts=[c for found in taken.conflicts for c in m.conflicts(found)] or None,
    )


@tool()
def finish_work(
    ctx: Context,
    item_id: ItemId,
    summary: Annotated[str, Field(min_length=1)],
    state: Literal["done", "blocked", "dropped"] = "done",
    reason: str | None = None,
    session_id: SessionId = None,
) -> Finished:
    """Finish your work item (blocked needs a reason); releases its claims, announces ready."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    done = actions.finish_work(db, me, item_id, summary, state=state, reason=reason)
    return Finished(
        item=work_out(done.item), released=list(done.released), ready=[i.id for i in done.ready]
    )


TOOLS = (plan_work, take_work, finish_work)
