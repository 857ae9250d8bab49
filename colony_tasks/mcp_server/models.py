"""Typed tool results (published as output schemas) and their conversion from core records.

Core records are read by attribute only (they are namedtuple-style classes). Fields that are often
empty default to None and are left out of results, so agents pay only for what is there.
Times are local ``YYYY-MM-DD HH:MM:SS`` strings, like the CLI's. The models carry no docstrings:
pydantic would publish them in every output schema, and ``tools/list`` must stay small.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar, overload

from pydantic import BaseModel

from colony_tasks.base.text import LINE_CHARS, clip, iso


class Item(BaseModel):  # one thread item, its text clipped
    id: int
    kind: str
    author: str | None = None
    time: str
    text: str
    to: str | None = None
    in_reply_to: int | None = None
    status: str | None = None
    urgent: bool | None = None


class Record(BaseModel):  # one observation in full
    id: int
    kind: str
    author: str | None = None
    session_id: str | None = None
    task_id: int | None = None
    time: str
    text: str
    meta: dict[str, Any] | None = None
    to: str | None = None
    in_reply_to: int | None = None
    status: str | None = None
    urgent: bool | None = None


class TaskInfo(BaseModel):
    id: int
    title: str
    mode: str
    status: str
    lane: str | None = None
    root: str | None = None
    participants: list[str]
    last_activity: str
    joined: bool | None = None
    plan: dict[str, int] | None = None  # work items per state


class TaskList(BaseModel):
    tasks: list[TaskInfo]


class Timeline(BaseModel):
    task_id: int
    items: list[Item]
    next_before_id: int | None = None


class Updates(BaseModel):
    task_id: int
    items: list[Item]
    remaining: int
    cursor: int


class Posted(BaseModel):
    id: int
    task_id: int
    kind: str
    author: str
    to: str | None = None
    delivery: dict[str, str]
    # Per recipient, when it will see the item: "waking" (it idles and is woken now), "next
    # turn", "next hook, or before it stops", "woke", "ended: re-address it to the lane".
    reach: dict[str, str] | None = None


class PostResult(Posted):  # an answer: ok=false with a message when someone answered first
    ok: bool | None = None
    message: str | None = None


class Answered(BaseModel):
    ok: bool
    question_id: int
    answer_id: int | None = None
    answered_by: str | None = None
    note_id: int | None = None
    message: str | None = None


class Claim(BaseModel):
    id: int
    pattern: str
    expires: str
    note: str | None = None


class Conflict(BaseModel):  # another session's live claim on, or recent edit of, a path
    path: str
    by: str
    who: str | None = None  # developer@machine, when another person's or machine's
    claim: str | None = None  # their claimed pattern
    until: str | None = None  # their claim's expiry
    stale: bool | None = None  # holder inactive for 30 minutes
    edited: str | None = None  # when they edited the path
    other_lane: bool | None = None  # on another branch of the repository
    branch: str | None = None
    note: str | None = None


class Claimed(BaseModel):
    holder: str
    granted: list[Claim]
    conflicts: list[Conflict]


class Released(BaseModel):
    released: list[str]


class Accepted(BaseModel):
    handoff_id: int
    accept_id: int
    claims: list[Claim]


class Hit(BaseModel):
    id: int
    kind: str
    author: str | None = None
    task_id: int | None = None
    task: str | None = None  # the task's title
    time: str
    snippet: str
    next: str  # the call that shows the hit's context


class Hits(BaseModel):
    hits: list[Hit]
    bodies: str | None = None  # the call that returns the hits' full texts


class Records(BaseModel):
    items: list[Record]
    missing: list[int]


P = TypeVar("P", bound=Posted)


# -- conversion from core records ---------------------------------------------------------------


def item(obs: Any, limit: int = LINE_CHARS) -> Item:
    """A compact item from a core ``Observation``."""
    return Item(
        id=obs.id,
        kind=obs.kind,
        author=obs.handle,
        time=iso(obs.created_at),
        text=clip(obs.text, limit),
        to=obs.to,
        in_reply_to=obs.in_reply_to,
        status=obs.status,
        urgent=True if obs.urgent else None,
    )


def record(obs: Any) -> Record:
    """A full record from a core ``Observation``."""
    return Record(
        id=obs.id,
        kind=obs.kind,
        author=obs.handle,
        session_id=obs.session_id,
        task_id=obs.task_id,
        time=iso(obs.created_at),
        text=obs.text,
        meta=dict(obs.meta) or None,
        to=obs.to,
        in_reply_to=obs.in_reply_to,
        status=obs.status,
        urgent=True if obs.urgent else None,
    )


def delivery(recipients: list[dict[str, Any]]) -> dict[str, str]:
    """``{handle: state}`` from the core's recipient rows."""
    return {r["handle"]: r["state"] for r in recipients}


@overload
def posted(result: Any) -> Posted: ...
@overload
def posted(result: Any, model: type[P]) -> P: ...
def posted(result: Any, model: type[Posted] = Posted) -> Posted:
    """From the core's ``actions.Outcome`` (as ``model``: :class:`Posted` or :class:`PostResult`)."""
    extra = {} if model is Posted else {"ok": result.ok, "message": result.message}
    return model(
        id=result.id,
        task_id=result.task_id,
        kind=result.kind,
        author=result.author,
        to=result.to,
        delivery=delivery(result.recipients),
        reach={r["handle"]: r["wake"] for r in result.recipients if r.get("wake")} or None,
        **extra,
    )


def answered(result: Any) -> Answered:
    """From the core's ``AnswerResult``."""
    return Answered(
        ok=result.ok,
        question_id=result.question_id,
        answer_id=result.answer_id,
        answered_by=result.answered_by,
        note_id=result.note_id,
        message=result.message or None,
    )


def claim(row: dict[str, Any]) -> Claim:
    """From a public claim dict of :mod:`colony_tasks.domain.claims`."""
    return Claim(
        id=row["id"],
        pattern=row["pattern"],
        expires=iso(row["expires_at"]),
        note=row["note"] or None,
    )


def conflicts(found: Any) -> list[Conflict]:
    """Flat conflicts from the core's ``PathConflict`` (its claims, then its recent edits)."""
    out = [
        Conflict(
            path=found.path,
            by=h.handle,
            who=h.who or None,
            claim=h.pattern,
            until=iso(h.expires_at),
            stale=h.stale or None,
            other_lane=h.other_lane or None,
            branch=h.branch if h.other_lane else None,
            note=h.note or None,
        )
        for h in found.claims
    ]
    out.extend(
        Conflict(
            path=found.path,
            by=e.handle or e.session_id,
            who=e.who or None,
            edited=iso(e.at),
            other_lane=e.other_lane or None,
        )
        for e in found.recent_edits
    )
    return out


TITLE_CHARS = 60


def hit(found: Any, context: Any) -> Hit:
    """From a search hit (``id kind author task_id created_at snippet``) and its
    :class:`colony_tasks.search.HitContext` (task title, files named)."""
    if context.paths:  # a claim, release or edit: the file's history
        kinds = '["claim", "release", "edit"]'
        next_call = f"search(query={json.dumps(context.paths[0])}, kinds={kinds})"
    elif found.task_id is not None:
        next_call = f"task_timeline(task_id={found.task_id}, around_id={found.id})"
    else:
        next_call = f"get_observations(ids=[{found.id}])"
    title = context.task_title
    if title and len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1] + "…"
    return Hit(
        id=found.id,
        kind=found.kind,
        author=found.author,
        task_id=found.task_id,
        task=title,
        time=iso(found.created_at),
        snippet=found.snippet,
        next=next_call,
    )
