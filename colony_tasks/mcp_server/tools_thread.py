"""Tools that write to the thread: posts, claims, questions, handoffs, decisions, blockers.

Each one resolves the calling session, calls one core function and converts its result.
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from colony_tasks.domain import claims
from colony_tasks.usecases import actions

from . import identity
from . import models as m
from .toolkit import SessionId, TaskId, To, store, tool

Text = Annotated[str, Field(min_length=1)]
ItemId = Annotated[int, Field(ge=1)]


@tool()
def task_post(
    ctx: Context,
    content: Text,
    kind: Literal["note", "question", "answer", "decision", "blocker"] = "note",
    task_id: TaskId = None,
    to: To = None,
    in_reply_to: Annotated[int | None, Field(ge=1)] = None,
    urgent: Annotated[bool, Field(description="Deliver mid-turn.")] = False,
    session_id: SessionId = None,
) -> m.PostResult:
    """Post to a thread (kind=answer + in_reply_to answers); returns id and delivery state."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    posted = actions.post(
        db, me, content, kind=kind, task_id=task_id, to=to, in_reply_to=in_reply_to, urgent=urgent
    )
    return m.posted(posted, m.PostResult)


@tool()
def claim_file(
    ctx: Context,
    paths: Annotated[list[str], Field(min_length=1, max_length=200, description="Files or globs.")],
    ttl_minutes: Annotated[float, Field(ge=1, le=10080)] = claims.DEFAULT_TTL_MINUTES,
    note: str | None = None,
    task_id: TaskId = None,
    session_id: SessionId = None,
) -> m.Claimed:
    """Claim files or globs before editing (advisory, TTL); returns grants and conflicts."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    result = actions.claim(db, me, paths, ttl_minutes=ttl_minutes, note=note or "", task_id=task_id)
    return m.Claimed(
        holder=me.handle,
        granted=[m.claim(c) for c in result.granted],
        conflicts=[c for found in result.conflicts for c in m.conflicts(found)],
    )


@tool()
def release_file(
    ctx: Context,
    paths: Annotated[list[str] | None, Field(min_length=1, max_length=200)] = None,
    session_id: SessionId = None,
) -> m.Released:
    """Release your claims on paths (default: all your claims)."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    released = actions.release(db, me, paths)
    return m.Released(released=[r["pattern"] for r in released])


@tool()
def ask_question(
    ctx: Context,
    question: Text,
    to: To = None,
    task_id: TaskId = None,
    urgent: Annotated[bool, Field(description="Deliver mid-turn.")] = False,
    session_id: SessionId = None,
) -> m.Posted:
    """Ask a question in the thread; returns its id. Without to, anyone may answer (first wins)."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    return m.posted(actions.ask(db, me, question, to=to, task_id=task_id, urgent=urgent))


@tool()
def answer_question(
    ctx: Context,
    question_id: ItemId,
    answer: Text,
    session_id: SessionId = None,
) -> m.Answered:
    """Answer a question. ok=false when someone answered first (your text is kept as a note)."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    return m.answered(actions.answer(db, me, question_id, answer))


@tool()
def hand_off(
    ctx: Context,
    summary: Text,
    to: To = None,
    files: Annotated[list[str] | None, Field(max_length=200)] = None,
    task_id: TaskId = None,
    session_id: SessionId = None,
) -> m.PostResult:
    """Hand work off; accepting it moves your claims on files to the acceptor (files you hold
    no claim on are skipped: message names them). Returns its id."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    posted = actions.hand_off(db, me, summary, to=to, files=files or (), task_id=task_id)
    return m.posted(posted, m.PostResult)


@tool()
def accept_handoff(
    ctx: Context,
    handoff_id: ItemId,
    session_id: SessionId = None,
) -> m.Accepted:
    """Accept a handoff; its files' claims become yours."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    result = actions.accept_handoff(db, me, handoff_id)
    return m.Accepted(
        handoff_id=result.handoff_id,
        accept_id=result.accept_id,
        claims=[m.claim(c) for c in result.claims],
    )


@tool()
def record_decision(
    ctx: Context,
    decision: Text,
    rationale: str | None = None,
    task_id: TaskId = None,
    session_id: SessionId = None,
) -> m.Posted:
    """Record a decision (and why) in the thread; returns its id."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    posted = actions.record_decision(db, me, decision, rationale=rationale, task_id=task_id)
    return m.posted(posted)


@tool()
def report_blocker(
    ctx: Context,
    blocker: Text,
    waiting_on: str | None = None,
    task_id: TaskId = None,
    session_id: SessionId = None,
) -> m.Posted:
    """Report what blocks you and who or what you wait on; returns its id."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    posted = actions.report_blocker(db, me, blocker, waiting_on=waiting_on, task_id=task_id)
    return m.posted(posted)


@tool()
def withdraw(ctx: Context, item_id: ItemId, session_id: SessionId = None) -> m.Posted:
    """Withdraw your own pending question or handoff."""
    db = store(ctx)
    return m.posted(actions.withdraw(db, identity.caller(db, session_id), item_id))


@tool()
def resolve_blocker(
    ctx: Context, blocker_id: ItemId, note: str | None = None, session_id: SessionId = None
) -> m.Posted:
    """Mark an open blocker resolved (it leaves every briefing)."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    return m.posted(actions.resolve_blocker(db, me, blocker_id, note))


TOOLS = (
    task_post,
    claim_file,
    release_file,
    ask_question,
    answer_question,
    hand_off,
    accept_handoff,
    record_decision,
    report_blocker,
    resolve_blocker,
    withdraw,
)
