"""Thread messages: the one primitive every post, answer, handoff and turn is stored through.

:func:`insert_message` checks that the author may write to the task (an agent only in lanes of
repositories it works in: :mod:`colony_tasks.domain.scope`), resolves who a message is for,
applies the loop guard and records the recipients, inside the caller's transaction. :func:`writable` is the gate for any write to a
task (open task, live author). Chain rules (the turn holder, turn numbers) wrap this module in
:mod:`colony_tasks.domain.chains`; posting and answering live in :mod:`colony_tasks.domain.posts`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..base import settings
from ..base.errors import Conflict, InvalidInput, NotAllowed, NotFound
from ..base.kinds import AGENT_KINDS, AgentKind, ObsKind, TaskStatus
from ..base.models import Observation, Record, Session, Task
from ..base.redact import redact
from ..base.text import MAX_TEXT_CHARS
from ..store import Store
from . import scope
from .sessions import lookup

BROADCAST = ("", "any", "all", "*")
MAX_MESSAGE_CHARS = MAX_TEXT_CHARS
DIRECTED_REQUESTS = (ObsKind.QUESTION, ObsKind.HANDOFF, ObsKind.TURN)


class Posted(Record):
    """A stored message and, per recipient, whether it has reached its context yet."""

    id: int
    task_id: int
    kind: str
    to: str | None
    recipients: list[dict[str, Any]]


class LoopGuard(NotAllowed):
    """Too many agent-to-agent requests in a row: a human has to weigh in."""

    def __init__(self, task_id: int, message: str) -> None:
        super().__init__(message)
        self.task_id = task_id


def check_text(value: Any, what: str) -> str:
    """The text of a message, stripped and redacted — here, before any write lock is taken
    (the store redacts it again in its write path, which then costs a dictionary lookup)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"The {what} must be non-empty text.")
    if len(value) > MAX_MESSAGE_CHARS:
        raise InvalidInput(
            f"The {what} is {len(value)} characters; the limit is {MAX_MESSAGE_CHARS}."
            " Post a summary and put details in a file."
        )
    return redact(value.strip())


def writable(task: Task, session: Session) -> None:
    """The gate for any write to a task: it must be open and its author live."""
    if task.status != TaskStatus.OPEN:
        raise Conflict(f"Task {task.id} is {task.status}; it accepts no new messages.")
    if session.ended_at is not None:
        raise NotAllowed(f"Session {session.handle} has ended; start a new session to post.")


def resolve_recipients(
    store: Store, task: Task, author: Session, to: str | None
) -> tuple[str | None, list[Session]]:
    """(stored addressee, recipient sessions) for ``to``: handle/id, agent kind, or broadcast."""
    target = (to or "").strip()
    others = [p for p in store.participants(task.id) if p.id != author.id and p.ended_at is None]
    if target.lower() in BROADCAST:
        return None, others
    if target.lower() in AGENT_KINDS:
        kind = target.lower()
        chosen = [p for p in others if p.agent == kind]
        if not chosen:
            raise NotFound(f"No active {kind} session is on task {task.id}; address `any` instead.")
        return kind, chosen
    session = lookup(store, target)
    if session is None:
        raise NotFound(f"Session {target!r} does not exist.", "show_task", task_id=task.id)
    if session.id == author.id:
        raise InvalidInput("A message cannot be addressed to its own author.")
    if not store.is_participant(task.id, session.id):
        raise NotFound(f"Session {session.handle} is not on task {task.id}; address someone on it.")
    if session.ended_at is not None:
        raise Conflict(f"Session {session.handle} has ended; address another participant.")
    return session.handle, [session]


def addressed_to(obs: Observation, session: Session) -> bool:
    """Whether ``obs`` waits on ``session``. A message's addressee is stored as a handle or an
    agent kind (:func:`resolve_recipients`), never a session id: comparing ids would let a
    session whose id equals another's handle take what is addressed to that handle."""
    return obs.to is None or obs.to in (session.handle, session.agent)


def loop_limit() -> int:
    """How many agent requests in a row a task takes without a human (``chains.loop_limit``)."""
    return int(settings.get("chains", "loop_limit") or 8)


def check_loop_guard(
    store: Store,
    task: Task,
    session: Session,
    kind: str,
    to: str | None,
    recipients: Sequence[Session],
    urgent: bool = False,
) -> None:
    """Refuse the next agent request — a question, handoff or turn (addressed or broadcast),
    or any item marked urgent: whatever may wake someone — once the limit since a human event
    is reached. A woken turn's prompt is no human event (:func:`colony_tasks.domain.wake.woken_turn`)."""
    if session.agent == AgentKind.HUMAN or (kind not in DIRECTED_REQUESTS and not urgent):
        return
    if kind == ObsKind.TURN and all(r.agent == AgentKind.HUMAN for r in recipients):
        return  # passing the turn to a human is how loops end
    limit = loop_limit()
    count = store.directed_agent_items_since(task.id, store.last_human_event(task.id))
    if count >= limit:
        raise LoopGuard(
            task.id,
            f"Loop guard: {count} agent-to-agent requests in a row on task {task.id} since the"
            f" last human input; {session.handle}'s {kind} to {to or 'everyone'} was not sent. A human needs to"
            " weigh in (post to the thread or prompt one of the agents).",
        )


def guarded(store: Store, session: Session, action: Callable[[], Any]) -> Any:
    """Run ``action`` in one transaction; a tripped loop guard rolls it back, then posts the
    refusal to the thread in its own transaction (so the human sees it) and re-raises."""
    try:
        with store.transaction():
            return action()
    except LoopGuard as guard:
        store.add_observation(
            ObsKind.GUARD, str(guard), session_id=session.id, task_id=guard.task_id
        )
        raise


def insert_message(
    store: Store,
    task: Task,
    session: Session,
    kind: ObsKind,
    body: str,
    *,
    to: str | None = None,
    in_reply_to: int | None = None,
    urgent: bool = False,
    meta: dict[str, Any] | None = None,
    status: str | None = None,
    turn: int | None = None,
) -> Posted:
    """Store one thread message inside the caller's transaction (the author joins the task).

    Callers pass the gate first; on a chain they go through :func:`colony_tasks.domain.chains.insert`,
    which numbers the turn and hands it back.
    """
    scope.check_task(store, task, session)
    store.add_participant(task.id, session.id)
    addressee, recipients = resolve_recipients(store, task, session, to)
    check_loop_guard(store, task, session, kind, addressee, recipients, urgent)
    obs_id = store.add_observation(
        kind,
        body,
        session_id=session.id,
        task_id=task.id,
        meta=meta,
        to=addressee,
        in_reply_to=in_reply_to,
        urgent=urgent,
        status=status,
        turn=turn,
    )
    store.add_recipients(obs_id, [r.id for r in recipients])
    return Posted(obs_id, task.id, kind, addressee, store.recipients(obs_id))
