"""``colony-tasks plan``: a task's work items for humans — show, add, take, done, reassign, drop."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import click

from ..base.kinds import FINISH_STATES
from ..base.models import Session, WorkItem
from ..base.text import ago, one_line
from ..domain import work
from ..store import Store
from ..usecases import actions
from .app import cli
from .output import CONTEXT_SETTINGS, emit, json_option, table, with_store

AS_OPTION = click.option("--as", "as_name", default=None, help="Your name (default: your login).")
TASK_OPTION = click.option(
    "--task", "task_id", type=int, default=None, help="The task (default: this folder's lane task)."
)

T = TypeVar("T")


def _as_me(store: Store, as_name: str | None, act: Callable[[Session], T]) -> T:
    """Run ``act`` as the human ``--as`` names; nothing stays behind when it is refused."""
    return actions.as_human(store, as_name, os.getcwd(), act)


def _line(item: WorkItem) -> str:
    owner = f" ({one_line(item.owner_handle)})" if item.owner_handle else ""
    return f"#{item.id} {one_line(item.title)} [{item.state}]{owner}"


@cli.group(invoke_without_command=True, context_settings=CONTEXT_SETTINGS)
@click.pass_context
def plan(ctx: click.Context) -> None:
    """Plans: a task's work items, their files, dependencies and owners (default: show)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(plan_show)


@plan.command("show", context_settings=CONTEXT_SETTINGS)
@click.argument("task_id", type=int, required=False)
@json_option
@with_store
def plan_show(store: Store, task_id: int | None = None, as_json: bool = False) -> None:
    """The plan of TASK_ID (default: this folder's lane task) as a table."""
    if task_id is None:
        task_id = actions.lane_task_of(store, os.getcwd()).id
    board = actions.plan_show(store, task_id)

    def render() -> str:
        if not board.items:
            return (
                f"Task {board.task_id} has no plan yet. Add items with"
                f" `colony-tasks plan add TITLE --task {board.task_id}`."
            )
        now = store.now()
        rows = []
        for item in board.items:
            state = item.state
            if item.id in board.ready:
                state = "ready"
            elif item.id in board.stale:
                state = f"taken, stale ({work.stale_note(item, now)})"
            elif item.state == "taken":
                state = f"taken {ago(item.taken_at, now)}"
            rows.append(
                [
                    f"#{item.id}",
                    item.title,
                    state,
                    item.owner_handle or "-",
                    ", ".join(f"#{d}" for d in item.depends_on) or "-",
                    ", ".join(item.files) or "-",
                ]
            )
        counts = ", ".join(f"{n} {s}" for s, n in board.counts.items() if n)
        head = f"Plan of task {board.task_id} {one_line(board.title)} ({counts}):"
        return "\n".join([head, table(rows, ["ITEM", "TITLE", "STATE", "OWNER", "AFTER", "FILES"])])

    emit(as_json, board, render)


@plan.command("add", context_settings=CONTEXT_SETTINGS)
@click.argument("title")
@click.option("--files", "files", multiple=True, help="A file or glob the item owns (repeat).")
@click.option("--after", "after", type=int, multiple=True, help="An item it depends on (repeat).")
@click.option("--description", default=None, help="What the item is about.")
@TASK_OPTION
@AS_OPTION
@json_option
@with_store
def plan_add(
    store: Store,
    title: str,
    files: tuple[str, ...],
    after: tuple[int, ...],
    description: str | None,
    task_id: int | None,
    as_name: str | None,
    as_json: bool,
) -> None:
    """Add an item TITLE to the plan."""
    spec = {
        "title": title,
        "files": list(files),
        "depends_on": [f"#{a}" for a in after],
        "description": description or "",
    }
    planned = _as_me(
        store, as_name, lambda me: actions.plan_work(store, me, [spec], task_id=task_id)
    )
    ready = " It is ready to take." if planned.ready else ""
    emit(
        as_json,
        planned,
        lambda: f"Added item #{planned.ids[0]} to task {planned.task_id}.{ready}",
    )


@plan.command("take", context_settings=CONTEXT_SETTINGS)
@click.argument("item_id", type=int, required=False)
@TASK_OPTION
@AS_OPTION
@json_option
@with_store
def plan_take(
    store: Store, item_id: int | None, task_id: int | None, as_name: str | None, as_json: bool
) -> None:
    """Take ITEM_ID (default: the next ready item) and claim its files."""
    taken = _as_me(
        store, as_name, lambda me: actions.take_work(store, me, item_id, task_id=task_id)
    )

    def render() -> str:
        if taken.item is None:
            return taken.message or "Nothing to take."
        lines = [f"You took {_line(taken.item)}."]
        if taken.item.files:
            lines.append(f"Claimed: {one_line(', '.join(taken.item.files))}")
        for conflict in taken.conflicts:
            holders = ", ".join(h.handle for h in conflict.claims) or ", ".join(
                e.handle or "?" for e in conflict.recent_edits
            )
            lines.append(
                f"Also held or edited by others: {one_line(conflict.path)} ({one_line(holders)})"
            )
        return "\n".join(lines)

    emit(as_json, taken, render)


@plan.command("done", context_settings=CONTEXT_SETTINGS)
@click.argument("item_id", type=int)
@click.argument("summary")
@click.option("--state", type=click.Choice(FINISH_STATES), default="done", show_default=True)
@click.option("--reason", default=None, help="What a blocked item waits for.")
@AS_OPTION
@json_option
@with_store
def plan_done(
    store: Store,
    item_id: int,
    summary: str,
    state: str,
    reason: str | None,
    as_name: str | None,
    as_json: bool,
) -> None:
    """Finish ITEM_ID with a SUMMARY (done, or --state blocked/dropped)."""
    done = _as_me(
        store,
        as_name,
        lambda me: actions.finish_work(store, me, item_id, summary, state=state, reason=reason),
    )

    def render() -> str:
        ready = "; ".join(_line(i) for i in done.ready)
        return f"Item #{item_id} is {done.item.state}." + (f" Ready now: {ready}." if ready else "")

    emit(as_json, done, render)


@plan.command("reassign", context_settings=CONTEXT_SETTINGS)
@click.argument("item_id", type=int)
@click.option("--to", "to", default=None, help="A handle or session id (omit: back to open).")
@AS_OPTION
@json_option
@with_store
def plan_reassign(
    store: Store, item_id: int, to: str | None, as_name: str | None, as_json: bool
) -> None:
    """Give ITEM_ID to another session, or put it back to open (the stuck-agent move)."""
    item = _as_me(store, as_name, lambda me: actions.reassign_work(store, me, item_id, to))
    emit(as_json, item, lambda: f"Item {_line(item)}.")


@plan.command("drop", context_settings=CONTEXT_SETTINGS)
@click.argument("item_id", type=int)
@click.option("--reason", default=None, help="Why it will not be done.")
@AS_OPTION
@json_option
@with_store
def plan_drop(
    store: Store, item_id: int, reason: str | None, as_name: str | None, as_json: bool
) -> None:
    """Drop ITEM_ID: it will not be done and no longer holds up the items after it."""
    done = _as_me(store, as_name, lambda me: actions.drop_work(store, me, item_id, reason))
    ready = "; ".join(_line(i) for i in done.ready)
    emit(
        as_json,
        done,
        lambda: f"Dropped item #{item_id}." + (f" Ready now: {ready}." if ready else ""),
    )
