"""What the viewer shows, gathered from the core and the store as plain dicts and records.

Pages (Jinja2) and the JSON API render the same dicts, so both always agree. Nothing here
writes: every function only reads.
"""

from __future__ import annotations

from typing import Any

from ..base.errors import ColonyError, describe
from ..base.kinds import THREAD_KINDS, ItemStatus, ObsKind, TaskMode, TaskStatus
from ..base.models import Observation, Session, Task
from ..domain import claims as claims_mod
from ..domain import conflict_map, work
from ..domain import presence as presence_mod
from ..domain.tasks import get_task
from ..search import Searcher
from ..store import Store
from ..usecases import actions
from .actions import STEP_WORDING

THREAD_LIMIT = 500
MESSAGE_KINDS = THREAD_KINDS
ACTIVITY_KINDS = (ObsKind.PROMPT, ObsKind.EDIT, ObsKind.COMMAND)
WAITING_KINDS = (ObsKind.QUESTION, ObsKind.HANDOFF, ObsKind.BLOCKER)


def presence(session: Session, now: float) -> str:
    """The session's presence, by the core's one rule (:func:`colony_tasks.domain.presence.of`)."""
    return presence_mod.of(session.ended_at, session.waiting, session.last_seen_at, now)


def person(session: Session, now: float) -> dict[str, Any]:
    """A session as the viewer shows it: handle, agent kind, who runs it where, presence."""
    return {
        "id": session.id,
        "handle": session.handle,
        "agent": session.agent,
        "who": session.who,
        "presence": presence(session, now),
        "waiting": presence_mod.describe(session.waiting, session.waiting_since, now),
        "last_seen_at": session.last_seen_at,
        "started_at": session.started_at,
        "ended_at": session.ended_at,
        "cwd": session.cwd,
        "lane_id": session.lane_id,
    }


# -- lanes and tasks --------------------------------------------------------------------------


def overview(store: Store, *, status: str = TaskStatus.OPEN, limit: int = 200) -> dict[str, Any]:
    """Tasks (open by default) with their lane, participants, waiting items; chains apart."""
    now = store.now()
    rows = actions.task_list(store, status=status, limit=limit)
    ids = [row["id"] for row in rows]
    members = store.overview.participants_by_task(ids)
    waiting: dict[int, dict[str, list[Observation]]] = {i: {} for i in ids}
    for obs in store.open_items(
        kinds=WAITING_KINDS,
        statuses=(ItemStatus.PENDING, ItemStatus.OPEN),
        task_ids=ids,
        limit=5000,
    ):
        waiting[int(obs.task_id or 0)].setdefault(obs.kind, []).append(obs)
    tasks: list[dict[str, Any]] = []
    chains: list[dict[str, Any]] = []
    for row in rows:
        people = {s.id: person(s, now) for s in members.get(row["id"], [])}
        item = {
            **row,
            "people": list(people.values()),
            "online": sum(p["presence"] == "online" for p in people.values()),
            "questions": waiting[row["id"]].get("question", []),
            "handoffs": waiting[row["id"]].get("handoff", []),
            "blockers": waiting[row["id"]].get("blocker", []),
            "coordinator_handle": row["coordinator"],
            "turn_holder_handle": row["turn_holder"],
        }
        (chains if row["mode"] == TaskMode.CHAIN else tasks).append(item)
    return {"now": now, "tasks": tasks, "chains": chains}


# -- one thread -------------------------------------------------------------------------------


def decorate(
    store: Store, items: list[Observation], people: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Thread items with what their cards show: author kind, resolution, the item replied to."""
    waiting = [o.id for o in items if o.kind in WAITING_KINDS]
    resolved = store.overview.resolutions(waiting)
    parents = {
        o.id: o for o in store.get_observations([o.in_reply_to for o in items if o.in_reply_to])
    }
    known = dict(people)  # authors who are not participants are looked up once each
    out = []
    for obs in items:
        author = known.get(obs.session_id or "")
        if author is None and obs.session_id:
            found = store.get_session(obs.session_id)
            if found is not None:
                author = known[found.id] = person(found, store.now())
        out.append(
            {
                "obs": obs,
                "agent": author["agent"] if author else "system",
                "resolution": resolved.get(obs.id),
                "parent": parents.get(obs.in_reply_to) if obs.in_reply_to else None,
            }
        )
    return out


def thread_kinds(activity: bool) -> tuple[str, ...]:
    return (*MESSAGE_KINDS, *ACTIVITY_KINDS) if activity else MESSAGE_KINDS


def thread_state(store: Store, task: Task) -> dict[str, Any]:
    """The parts of a thread page that change as it goes: header, sidebar, open items."""
    now = store.now()
    info = actions.show_task(store, task.id)
    people = {s.id: person(s, now) for s in info["participants"]}
    return {
        "now": now,
        "task": task,
        "lane": info["lane"],
        "people": people,
        "questions": info["questions"],
        "handoffs": info["handoffs"],
        "blockers": info["blockers"],
        "claims": info["claims"],
        "undelivered": info["undelivered"],
        "coordinator_handle": info["coordinator"],
        "turn_holder_handle": info["turn_holder"],
        "plan": plan_view(store, task.id),
    }


PLAN_COLUMNS = ("open", "taken", "blocked", "done")


def plan_view(store: Store, task_id: int) -> dict[str, Any] | None:
    """The plan as a board: columns open / taken / blocked / done (dropped with done), each
    item with its owner, files, dependencies and whether it is ready or stale."""
    board = actions.plan_show(store, task_id)
    if not board.items:
        return None
    now = store.now()
    ready, stale = set(board.ready), set(board.stale)
    columns: dict[str, list[dict[str, Any]]] = {c: [] for c in PLAN_COLUMNS}
    for item in board.items:
        column = "done" if item.state == "dropped" else item.state
        columns[column].append(
            {
                **item.to_dict(),
                "ready": item.id in ready,
                "stale": item.id in stale,
                "stale_note": work.stale_note(item, now) if item.id in stale else None,
            }
        )
    return {"columns": columns, "counts": board.counts, "ready": board.ready, "stale": board.stale}


def thread_view(
    store: Store, task_id: int, *, activity: bool = False, limit: int = THREAD_LIMIT
) -> dict[str, Any]:
    """A task's thread page: its messages in order plus :func:`thread_state`."""
    task = get_task(store, task_id)
    state = thread_state(store, task)
    items = store.timeline(task.id, limit=limit, kinds=thread_kinds(activity))
    state.update(
        items=decorate(store, items, state["people"]),
        last_id=store.max_observation_id(task.id),
        hidden_before=len(items) == limit,
        activity=activity,
    )
    return state


def items_after(
    store: Store, task_id: int, after_id: int, *, activity: bool = False
) -> dict[str, Any]:
    """Items of a task after ``after_id`` (for live updates) and the new high-water mark."""
    task = get_task(store, task_id)
    rows = store.observations_after(task.id, after_id, kinds=thread_kinds(activity), limit=500)
    state = thread_state(store, task)
    last = max(store.max_observation_id(task.id), after_id)
    if len(rows) == 500:
        last = rows[-1].id
    state.update(items=decorate(store, rows, state["people"]), last_id=last, activity=activity)
    return state


# -- claims and sessions ----------------------------------------------------------------------


def claims_view(store: Store) -> dict[str, Any]:
    """Claims per repository with state and age; overlapping claims of two sessions flagged."""
    now = store.now()
    lanes = store.overview.lanes()
    names = {lane.repo_id: (lane.repo_name, lane.root) for lane in lanes.values()}
    repos: dict[str, dict[str, Any]] = {}
    for claim in claims_mod.list_live(store):
        name, root = names.get(claim["repo_id"], (claim["repo_id"], claim["repo_id"]))
        repo = repos.setdefault(
            claim["repo_id"],
            {"repo_id": claim["repo_id"], "repo_name": name, "root": root, "claims": []},
        )
        repo["claims"].append({**claim, "age": now - claim["since"], "conflicts_with": []})
    for repo in repos.values():
        held = [c for c in repo["claims"] if c["state"] != "expired"]
        for i, first in enumerate(held):
            for second in held[i + 1 :]:
                if first["session_id"] != second["session_id"] and claims_mod.matches(
                    first["pattern"], second["pattern"]
                ):
                    first["conflicts_with"].append(_overlap(second))
                    second["conflicts_with"].append(_overlap(first))
        repo["conflicts"] = sum(bool(c["conflicts_with"]) for c in repo["claims"])
        repo["counts"] = {
            state: sum(c["state"] == state for c in repo["claims"])
            for state in ("live", "stale", "expired")
        }
    ordered = sorted(repos.values(), key=lambda r: (-r["conflicts"], r["repo_name"]))
    return {"now": now, "repositories": ordered}


def _overlap(claim: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": claim["id"],
        "pattern": claim["pattern"],
        "holder": claim["holder"],
        "who": claim["who"],
    }


def conflicts_view(store: Store) -> dict[str, Any]:
    """Per repository, every two live sessions that changed one file: where they overlap (git
    will conflict), or that they do not (:mod:`colony_tasks.domain.conflict_map`)."""
    return {"repositories": conflict_map.repositories(store)}


def sessions_view(store: Store, *, limit: int = 300) -> dict[str, Any]:
    """Sessions, most recently seen first, with presence, lane and open tasks."""
    now = store.now()
    lanes = store.overview.lanes()
    tasks = store.overview.open_tasks_by_session()
    rows = []
    for session in store.list_sessions(limit=limit):
        lane = lanes.get(session.lane_id) if session.lane_id else None
        rows.append(
            {
                **person(session, now),
                "repo_name": lane.repo_name if lane else None,
                "branch": lane.branch if lane else None,
                "tasks": tasks.get(session.id, []),
            }
        )
    counts = {state: sum(r["presence"] == state for r in rows) for state in ("online", "idle")}
    return {"now": now, "sessions": rows, "counts": counts}


def search_view(store: Store, query: str, *, limit: int = 50) -> dict[str, Any]:
    """The CLI's search (hybrid when vectors exist, keywords otherwise), hits linked to threads."""
    query = (query or "").strip()
    if not query:
        return {"query": "", "hits": [], "error": None}
    try:
        hits = actions.search(Searcher(store), query, limit=limit)
    except ColonyError as error:
        return {"query": query, "hits": [], "error": describe(error, STEP_WORDING)}
    titles: dict[int, str] = {}
    for task_id in {hit.task_id for hit in hits if hit.task_id is not None}:
        found = store.get_task(task_id)
        titles[task_id] = found.title if found else f"task {task_id}"
    return {"query": query, "hits": [_linked(hit, titles) for hit in hits], "error": None}


def _linked(hit: Any, titles: dict[int, str]) -> dict[str, Any]:
    item = hit.to_dict()
    item["task_title"] = titles.get(hit.task_id) if hit.task_id is not None else None
    if hit.task_id is None:
        item["url"] = None
    else:
        activity = "?activity=1" if hit.kind not in MESSAGE_KINDS else ""
        item["url"] = f"/tasks/{int(hit.task_id)}{activity}#m{int(hit.id)}"
    return item
