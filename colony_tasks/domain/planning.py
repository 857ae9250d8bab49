"""Planning: a task divided into owned work items, with the dependencies between them.

Any participant may plan items in a task; on a chain the plan is the coordinator's
(:func:`colony_tasks.domain.chains.check_plannable`). One call checks every item first (a
title, files as paths or globs, dependencies naming items of the same call by index or
existing items of the task as ``"#12"``) and refuses unknown dependencies and cycles before
anything is written; then it adds the items in one transaction and announces them, with the
ones ready now, as one ``work`` thread item. What happens to an item once planned (taking,
finishing, reassigning, dropping) is in :mod:`colony_tasks.domain.work`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base.errors import InvalidInput
from ..base.models import Record, Session
from ..base.text import clip, one_line
from ..store import Store
from . import chains, work
from . import claims as claims_mod
from .messages import check_text
from .tasks import task_for

MAX_ITEMS = 100
MAX_TITLE = 200
MAX_FILES = 50


class Planned(Record):
    """The items a call planned (ids in the order given) and which of them are ready."""

    task_id: int
    ids: list[int]
    ready: list[int]


def _spec(raw: Any, index: int) -> tuple[str, str, list[str], list[Any]]:
    if not isinstance(raw, dict):
        raise InvalidInput(f"Item {index} must be an object with a title.")
    title = one_line(check_text(raw.get("title"), f"title of item {index}"))
    if len(title) > MAX_TITLE:
        raise InvalidInput(f"The title of item {index} is over {MAX_TITLE} characters.")
    description = raw.get("description") or ""
    if not isinstance(description, str):
        raise InvalidInput(f"The description of item {index} must be text.")
    files = raw.get("files") or []
    if isinstance(files, str) or not all(isinstance(f, str) for f in files):
        raise InvalidInput(f"The files of item {index} must be a list of paths or globs.")
    if len(files) > MAX_FILES:
        raise InvalidInput(f"Item {index} lists over {MAX_FILES} files; use globs.")
    deps = raw.get("depends_on") or []
    if isinstance(deps, str | int):
        deps = [deps]
    return title, description.strip(), list(files), list(deps)


def _dependency(ref: Any, index: int, count: int) -> tuple[str, int]:
    """``("index", i)`` for an item of this call, ``("id", n)`` for an existing item."""
    if isinstance(ref, bool):
        ref = None
    if isinstance(ref, int):
        if 0 <= ref < count:
            return "index", ref
        raise InvalidInput(
            f"Item {index} depends on index {ref}, but this call has items 0 to {count - 1};"
            ' name an existing item as "#<id>".'
        )
    text = str(ref).strip() if isinstance(ref, str) else ""
    if text.startswith("#") and text[1:].isdigit():
        return "id", int(text[1:])
    raise InvalidInput(
        f"Item {index} has dependency {ref!r}; use the index of an item in this call (0, 1, …)"
        ' or "#<id>" of an existing item.'
    )


def _order(edges: dict[int, list[int]], titles: list[str]) -> None:
    """Refuse a cycle among the items of one call, naming it."""
    state: dict[int, int] = {}  # 1 = on the current path, 2 = done

    def visit(node: int, path: list[int]) -> None:
        state[node] = 1
        for dep in edges.get(node, []):
            if state.get(dep) == 1:
                loop = [*path[path.index(dep) :], dep] if dep in path else [node, dep]
                names = " → ".join(f"{i} ({clip(titles[i], 30)})" for i in loop)
                raise InvalidInput(
                    f"The dependencies form a cycle: {names}. Nothing was planned; remove one"
                    " of them."
                )
            if state.get(dep) is None:
                visit(dep, [*path, dep])
        state[node] = 2

    for node in range(len(titles)):
        if state.get(node) is None:
            visit(node, [node])


def plan(
    store: Store,
    session: Session,
    items: Sequence[dict[str, Any]],
    *,
    task_id: int | None = None,
) -> Planned:
    """Add items to a task's plan (dependencies by index in this call or ``"#<id>"``)."""
    if isinstance(items, dict | str) or not items:
        raise InvalidInput("Pass a non-empty list of items, each with a title.")
    if len(items) > MAX_ITEMS:
        raise InvalidInput(f"Plan at most {MAX_ITEMS} items per call.")
    specs = [_spec(raw, i) for i, raw in enumerate(items)]
    titles = [s[0] for s in specs]
    edges: dict[int, list[int]] = {}
    existing: dict[int, list[int]] = {}
    for i, (_, _, _, deps) in enumerate(specs):
        for ref in deps:
            kind, value = _dependency(ref, i, len(specs))
            (edges if kind == "index" else existing).setdefault(i, []).append(value)
    _order(edges, titles)
    with store.transaction():
        task = task_for(store, session, task_id)
        chains.check_plannable(store, task, session)
        wanted = sorted({d for deps in existing.values() for d in deps})
        found = store.work_ids_in_task(task.id, wanted)
        missing = [d for d in wanted if d not in found]
        if missing:
            raise InvalidInput(
                f"Task {task.id} has no work item {', '.join(f'#{d}' for d in missing)};"
                " nothing was planned.",
                "plan_show",
            )
        lane = work.files_lane(store, session, task)
        ids: list[int] = []
        for i, (title, description, files, _) in enumerate(specs):
            rel: list[str] = []
            if files:
                if lane is None:
                    raise InvalidInput(
                        f"Item {i} lists files, but task {task.id} has no repository."
                    )
                rel = list(
                    dict.fromkeys(
                        claims_mod.normalize(f, lane=lane, cwd=session.cwd) for f in files
                    )
                )
            ids.append(
                store.insert_work_item(
                    task.id, title, description=description, files=rel, created_by=session.id
                )
            )
        for i, item_id in enumerate(ids):
            deps = [ids[j] for j in edges.get(i, [])] + existing.get(i, [])
            if deps:
                store.add_work_deps(item_id, deps)
        items_now = [store.work_item(i) for i in ids]
        ready = [i.id for i in items_now if i is not None and store.work_is_ready(i.id)]
        parts = []
        for item in items_now:
            assert item is not None
            after = (
                f" (after {', '.join(f'#{d}' for d in item.depends_on)})" if item.depends_on else ""
            )
            parts.append(f"#{item.id} {clip(item.title, work.TITLE_IN_TEXT)}{after}")
        text = f"planned {len(ids)} item{'s' if len(ids) != 1 else ''}: {'; '.join(parts)}"
        work.announce(store, task, session, text, ready, {"event": "plan", "items": ids})
    return Planned(task.id, ids, ready)
