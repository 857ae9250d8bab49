"""Commands over the foundation: status, sessions, tasks."""

from __future__ import annotations

import click

from ..base import paths
from ..base.kinds import Presence
from ..base.models import Session
from ..base.text import ago, iso, one_line
from ..domain import presence
from ..domain.tasks import STATUS_FILTERS
from ..render.lines import item_line
from ..store import Store
from ..usecases import actions
from .app import cli
from .output import CONTEXT_SETTINGS, emit, json_option, table, with_store


@cli.command(context_settings=CONTEXT_SETTINGS)
@json_option
@with_store
def status(store: Store, as_json: bool) -> None:
    """Store path, schema version and counts."""
    data = {
        "home": str(paths.home()),
        "database": store.path,
        "schema_version": store.schema_version(),
        **store.counts(),
    }
    emit(as_json, data, lambda: "\n".join(f"{k}: {v}" for k, v in data.items()))


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.option("--active", is_flag=True, help="Only sessions that have not ended.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000))
@json_option
@with_store
def sessions(store: Store, active: bool, limit: int, as_json: bool) -> None:
    """List sessions, most recently seen first."""
    found = store.list_sessions(active_only=active, limit=limit)
    now = store.now()

    def render() -> str:
        if not found:
            return "No sessions yet. They appear when an agent with the hooks installed starts."
        rows = [
            [
                s.handle,
                s.agent,
                s.who,
                _state(s, now),
                ago(s.last_seen_at),
                s.cwd,
            ]
            for s in found
        ]
        return table(rows, ["HANDLE", "AGENT", "WHO", "STATE", "LAST SEEN", "CWD"])

    emit(as_json, found, render)


def _state(session: Session, now: float) -> str:
    """``online`` / ``idle`` / ``ended`` (the core's rule), or what the session waits on."""
    state = presence.of(session.ended_at, session.waiting, session.last_seen_at, now)
    if state in (Presence.WAITING, Presence.CUT_OFF):
        return presence.describe(session.waiting, session.waiting_since, now)
    return state


@cli.group(invoke_without_command=True, context_settings=CONTEXT_SETTINGS)
@click.option(
    "--status",
    "status_",
    default="open",
    show_default=True,
    type=click.Choice(STATUS_FILTERS),
)
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000))
@json_option
@click.pass_context
def tasks(ctx: click.Context, status_: str, limit: int, as_json: bool) -> None:
    """List tasks (default), or `tasks show TASK_ID`."""
    if ctx.invoked_subcommand is not None:
        return
    _list_tasks(status_, limit, as_json)


@with_store
def _list_tasks(store: Store, status_: str, limit: int, as_json: bool) -> None:
    found = actions.task_list(store, status=status_, limit=limit)

    def render() -> str:
        if not found:
            return "No tasks yet. A lane task is created when the first session joins a lane."
        rows = [
            [
                str(t["id"]),
                t["title"],
                t["mode"],
                t["status"],
                str(t["participants"]),
                ago(t["last_activity"]),
            ]
            for t in found
        ]
        return table(rows, ["ID", "TITLE", "MODE", "STATUS", "PEOPLE", "LAST ACTIVITY"])

    emit(as_json, found, render)


@tasks.command("show", context_settings=CONTEXT_SETTINGS)
@click.argument("task_id", type=int)
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000))
@json_option
@with_store
def tasks_show(store: Store, task_id: int, limit: int, as_json: bool) -> None:
    """Show a task: participants, open items, claims, and the thread as a timeline."""
    data = actions.show_task(store, task_id)
    data["timeline"] = store.timeline(task_id, limit=limit)
    emit(as_json, data, lambda: render_task(data, store.now()))


def render_task(data: dict, now: float) -> str:
    task, lane = data["task"], data["lane"]
    lines = [f"Task {task.id}: {one_line(task.title)} [{task.mode}, {task.status}]"]
    if lane:
        lines.append(f"Lane: {one_line(lane.root)} @ {one_line(lane.branch) or '(no branch)'}")
    who = ", ".join(
        f"{one_line(p.handle)} ({'ended' if p.ended_at else ago(p.last_seen_at, now)})"
        for p in data["participants"]
    )
    lines.append(f"Participants: {who or 'none'}")
    for title, key in (
        ("Pending questions", "questions"),
        ("Pending handoffs", "handoffs"),
        ("Open blockers", "blockers"),
    ):
        if data[key]:
            lines.append(f"{title}:")
            lines.extend(f"  {item_line(o, now=now)}" for o in data[key])
    if data["undelivered"]:
        lines.append("Directed items not yet delivered:")
        lines.extend(
            f"  #{u['id']} {u['kind']} {one_line(u['sender'])} → {one_line(u['recipient'])}"
            f" ({u['state']})"
            for u in data["undelivered"]
        )
    if task.mode == "chain":
        lines.insert(
            1,
            f"Chain: coordinator {one_line(data['coordinator'])}, turn {task.turn_seq},"
            f" turn holder {one_line(data['turn_holder'])}",
        )
    if data["claims"]:
        lines.append("Claims:")
        lines.extend(
            f"  {one_line(c['pattern'])} — {one_line(c['holder'])}"
            f" ({c['state']}, since {ago(c['since'], now)})"
            for c in data["claims"]
        )
    lines.append("")
    if not data["timeline"]:
        lines.append("No activity yet.")
    for obs in data["timeline"]:
        lines.append(f"{iso(obs.created_at)}  {item_line(obs)}")
    return "\n".join(lines)
