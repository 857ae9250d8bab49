"""The interface-change relay: keep each work tree's dependency graph in the store and tell the
sessions whose files import a module when another session changes its public surface.

Runs off the hook path only — the MCP server's background worker and ``colony-tasks index`` —
because it loads the dependency-graph parsers (tree-sitter). Hooks record edits with their
paths (``observation_paths``); :func:`index_repo` applies the edits recorded since it last ran
(``dep_repos.edits_seen``) to the stored graph with ``depgraph.update``, which re-reads only
those files and reports public-surface changes. Each change becomes one ``interface`` item in
the editing session's lane task, addressed (``recipients``) to exactly the other live sessions
of the task that claimed or lately edited a file importing the module, directly or through a
re-exporting ``__init__.py`` / ``index.ts``. Delivery is the usual exactly-once path: mid-turn
after a tool call, or in the next prompt's delta.

Two indexers may run at once (one MCP server per agent session): the results of a pass are
written only if ``edits_seen`` has not moved meanwhile, so every change is announced once.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field

from .. import depgraph
from ..base.globs import matches
from ..base.kinds import ObsKind
from ..base.models import Lane, Session
from ..domain import delivery
from ..store import Store
from . import rows as dep_rows

LIVE_WINDOW = 3600.0  # lanes with a session seen within this are indexed by the worker
MAX_CHANGES_SHOWN = 4


@dataclass
class Indexed:
    """What one pass over a work tree did."""

    repo: str
    built: bool = False  # a full build (first time, or asked for)
    files: int = 0
    edits: int = 0  # edit observations applied
    reparsed: int = 0
    notices: list[int] = field(default_factory=list)  # interface items recorded
    skipped: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    lost_race: bool = False  # another indexer applied the same edits first

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def repo_key(root: str) -> str:
    return os.path.realpath(root)


Cache = dict[str, tuple[int, depgraph.Graph]]


def index_repo(
    store: Store, root: str, *, full: bool = False, cache: Cache | None = None
) -> Indexed:
    """Build the graph of the work tree at ``root`` if it has none (or ``full``), else apply
    the edits recorded since the last pass and relay the interface changes they made.

    A long-lived caller passes a ``cache``: the graph it last wrote, per work tree, reused
    while nobody else has written since (loading 5,000 files' rows costs far more than
    applying one edit)."""
    started = time.perf_counter()
    repo = repo_key(root)
    state = store.graph.repo(repo)
    cache = {} if cache is None else cache
    if state is None or full:
        result = _build(store, repo, state, cache)
    else:
        result = _apply_edits(store, repo, state, cache)
    result.seconds = time.perf_counter() - started
    return result


def index_live(
    store: Store, *, now: float | None = None, cache: Cache | None = None
) -> list[Indexed]:
    """One pass over every git work tree with a live session (the worker's step). A session
    started in a plain folder (a home directory, say) does not get that folder indexed."""
    return [index_repo(store, root, cache=cache) for root in live_roots(store, now=now)]


def live_roots(store: Store, *, now: float | None = None) -> list[str]:
    since = (store.now() if now is None else now) - LIVE_WINDOW
    roots = {repo_key(lane.root) for lane in store.graph.lanes_with_live_sessions(since)}
    return sorted(r for r in roots if os.path.exists(os.path.join(r, ".git")))


def _lanes_at(store: Store, repo: str) -> list[Lane]:
    return [lane for lane in store.overview.lanes().values() if repo_key(lane.root) == repo]


def _load(store: Store, repo: str, state: dict) -> depgraph.Graph:
    files, edges = store.graph.rows(repo)
    return dep_rows.load(repo, state["config_json"], files, edges, _skipped(state))


def _skipped(state: dict) -> dict[str, int]:
    return dict(json.loads(state["skipped_json"] or "{}"))


def _cached(store: Store, repo: str, state: dict, cache: Cache) -> depgraph.Graph:
    seen, graph = cache.pop(repo, (-1, None))
    if graph is not None and seen == int(state["edits_seen"]):
        return graph
    return _load(store, repo, state)


def _build(store: Store, repo: str, state: dict | None, cache: Cache) -> Indexed:
    seen = store.max_observation_id()  # edits up to here are in the files the build reads
    previous = _cached(store, repo, state, cache) if state is not None else None
    graph = depgraph.build(repo, previous=previous)
    with store.transaction():
        now_state = store.graph.repo(repo)
        if state is None and now_state is not None:
            return Indexed(repo, lost_race=True)
        store.graph.save(
            repo,
            root=repo,
            config_json=dep_rows.config_json(graph.config),
            skipped=graph.skipped,
            files=dep_rows.file_rows(graph),
            edges=dep_rows.edge_rows(graph),
            edits_seen=seen,
        )
        final = store.graph.repo(repo)
    if final is not None:
        cache[repo] = (int(final["edits_seen"]), graph)
    return Indexed(repo, built=True, files=len(graph.files), skipped=graph.skipped)


def _apply_edits(store: Store, repo: str, state: dict, cache: Cache) -> Indexed:
    start = int(state["edits_seen"])
    lanes = _lanes_at(store, repo)
    edits = store.graph.edits_after([lane.id for lane in lanes], start)
    result = Indexed(repo, skipped=_skipped(state))
    if not edits:
        return result
    graph = _cached(store, repo, state, cache)  # popped: updated in place below
    before = dict(graph.files)
    update = depgraph.update(graph, sorted({e["path"] for e in edits}))
    moved = {
        p for p in before.keys() | graph.files.keys() if before.get(p) is not graph.files.get(p)
    }
    last_edit: dict[str, dict] = {e["path"]: e for e in edits}  # the latest per path
    lane_by_id = {lane.id: lane for lane in lanes}
    with store.transaction():
        now_state = store.graph.repo(repo)
        if now_state is None or int(now_state["edits_seen"]) != start:
            return Indexed(repo, lost_race=True)
        store.graph.save(
            repo,
            root=repo,
            config_json=dep_rows.config_json(graph.config),
            skipped=graph.skipped,
            files=[dep_rows.file_row(graph.files[p]) for p in sorted(moved) if p in graph.files],
            edges=dep_rows.edge_rows(graph, moved),
            paths=sorted(moved),
            edits_seen=edits[-1]["id"],
        )
        for path, changes in sorted(update.changes.items()):
            by = last_edit.get(path)
            if by is None:
                continue  # changed by a rebuild, not by a recorded edit: nobody to name
            notice = _notify(store, graph, lane_by_id, path, changes, by)
            if notice is not None:
                result.notices.append(notice)
    cache[repo] = (int(edits[-1]["id"]), graph)
    result.edits = len({e["id"] for e in edits})
    result.reparsed = len(update.reparsed) + len(update.added)
    result.files = len(graph.files)
    result.skipped = graph.skipped
    return result


def _files_of(store: Store, session: Session, lane: Lane) -> dict[str, str | None]:
    """The session's claimed patterns (with their regexes) and the paths it edited lately."""
    since = store.now() - delivery.TOUCHED_WINDOW
    files: dict[str, str | None] = dict.fromkeys(
        store.touched_paths(session.id, lane.repo_id, since)
    )
    files.update((c["pattern"], c["regex"]) for c in store.list_claims(session_id=session.id))
    return files


def _notify(
    store: Store,
    graph: depgraph.Graph,
    lanes: dict[int, Lane],
    path: str,
    changes: tuple[depgraph.SurfaceChange, ...],
    edit: dict,
) -> int | None:
    """Record one interface item for ``path`` in the editor's lane task, addressed to the
    other live participants whose files use the module; None when nothing imports it."""
    author = store.get_session(edit["session_id"])
    lane = lanes.get(author.lane_id) if author and author.lane_id else None
    task = store.open_lane_task(lane.id) if lane else None
    if author is None or lane is None or task is None:
        return None
    users = depgraph.dependents(graph, path, [c.name for c in changes])
    if not users:
        return None
    affected: dict[str, list[list[str]]] = {}
    handles = []
    for other in store.participants(task.id):
        if other.id == author.id or other.ended_at is not None:
            continue
        mine = _files_of(store, other, lane)
        hits = [[f, via] for f, via in users if any(matches(p, f, rx) for p, rx in mine.items())]
        if hits:
            affected[other.id] = hits
            handles.append(other.handle)
    described = [c.describe() for c in changes]
    shown = "; ".join(described[:MAX_CHANGES_SHOWN])
    if len(described) > MAX_CHANGES_SHOWN:
        shown += f"; and {len(described) - MAX_CHANGES_SHOWN} more"
    importers = sorted({f for f, _ in users})
    text = f"{path} changed {shown} — imported by {', '.join(importers[:5])}" + (
        f" and {len(importers) - 5} more" if len(importers) > 5 else ""
    )
    obs_id = store.add_observation(
        ObsKind.INTERFACE,
        text,
        session_id=author.id,
        task_id=task.id,
        meta={
            "path": path,
            "changes": described,
            "names": [c.name for c in changes],
            "edited_at": edit["created_at"],
            "edit_id": edit["id"],
            "importers": affected,
        },
        to=", ".join(handles) or None,
        paths=[path],
        repo_id=lane.repo_id,
    )
    store.add_recipients(obs_id, list(affected))
    return obs_id
