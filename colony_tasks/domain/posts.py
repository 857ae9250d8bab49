"""Posting to a thread: notes, questions and their answers, withdrawals, decisions, blockers.

:func:`post` is the one entry for a message of any postable kind: ``kind="answer"`` is routed
to :func:`answer` (the first answer to a broadcast question wins; a later one is kept as a
note), so no front end has to.
"""

from __future__ import annotations

from typing import Any

from ..base.errors import Conflict, InvalidInput, NotAllowed, NotFound
from ..base.kinds import MESSAGE_KINDS, ItemStatus, ObsKind
from ..base.models import Observation, Record, Session
from ..store import Store
from . import authority, chains
from .messages import Posted, addressed_to, check_text, guarded
from .sessions import find_session
from .tasks import get_task, task_for

# Kinds with rules of their own: a plain post of them would skip those rules.
OWN_RULES = {
    ObsKind.ACCEPT: "A handoff is accepted with accept_handoff(handoff_id), which moves its claims.",
}
INITIAL_STATUS = {
    ObsKind.QUESTION: ItemStatus.PENDING,
    ObsKind.HANDOFF: ItemStatus.PENDING,
    ObsKind.BLOCKER: ItemStatus.OPEN,
}


class AnswerResult(Record):
    """``ok`` False when someone else answered first (the text is then kept as a note)."""

    ok: bool
    question_id: int
    answer_id: int | None = None
    answered_by: str | None = None
    note_id: int | None = None
    message: str = ""

    @property
    def id(self) -> int:
        """The message that holds the text: the answer, or the note it became."""
        found = self.answer_id if self.ok else self.note_id
        if found is None:
            raise ValueError("An answer result holds no message id.")
        return found


def pending_item(store: Store, item_id: int, kind: ObsKind) -> Observation:
    obs = store.get_observation(int(item_id))
    if obs is None or obs.kind != kind:
        raise not_a(obs, item_id, kind.value)
    return obs


def not_a(obs: Observation | None, item_id: int, wanted: str) -> NotFound:
    """The error for an id that names nothing, or something other than ``wanted``: say which."""
    if obs is None:
        return NotFound(f"{wanted.capitalize()} {item_id} does not exist.")
    what = f"#{item_id} is {_article(obs.kind)} {obs.kind}, not {_article(wanted)} {wanted}"
    if obs.task_id is None:
        return NotFound(f"{what}.")
    return NotFound(f"{what} (task {obs.task_id}).", "show_task", task_id=obs.task_id)


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def post(
    store: Store,
    session: Session,
    text: str,
    *,
    task_id: int | None = None,
    kind: str = ObsKind.NOTE,
    to: str | None = None,
    in_reply_to: int | None = None,
    urgent: bool = False,
    meta: dict[str, Any] | None = None,
) -> Posted | AnswerResult:
    """Post a message to a task (joining it if needed); stored before anyone is told.

    ``kind="answer"`` answers the question ``in_reply_to`` (see :func:`answer`).
    """
    if kind not in MESSAGE_KINDS:
        raise InvalidInput(f"Unknown kind {kind!r}; use one of {', '.join(MESSAGE_KINDS)}.")
    kind = ObsKind(kind)
    if kind in OWN_RULES:
        raise InvalidInput(OWN_RULES[kind])
    if kind == ObsKind.ANSWER:
        if in_reply_to is None:
            raise InvalidInput("An answer needs the id of the question it answers (in_reply_to).")
        return answer(store, session, in_reply_to, text)
    return write(
        store,
        session,
        text,
        task_id=task_id,
        kind=kind,
        to=to,
        in_reply_to=in_reply_to,
        urgent=urgent,
        meta=meta,
    )


def write(
    store: Store,
    session: Session,
    text: str,
    *,
    task_id: int | None,
    kind: ObsKind,
    to: str | None = None,
    in_reply_to: int | None = None,
    urgent: bool = False,
    meta: dict[str, Any] | None = None,
) -> Posted:
    """Store a message of a kind with no routing of its own (the gate and chain rules apply)."""
    body = check_text(text, "message")

    def action() -> Posted:
        task = task_for(store, session, task_id)
        chains.check_writable(store, task, session)
        if in_reply_to is not None:
            parent = store.get_observation(int(in_reply_to))
            if parent is None or parent.task_id != task.id:
                raise NotFound(f"Message {in_reply_to} is not in task {task.id}.")
        return chains.insert(
            store,
            task,
            session,
            kind,
            body,
            to=to,
            in_reply_to=in_reply_to,
            urgent=urgent,
            meta=meta,
            status=INITIAL_STATUS.get(kind),
        )

    return guarded(store, session, action)


def ask(
    store: Store,
    session: Session,
    question: str,
    *,
    to: str | None = None,
    task_id: int | None = None,
    urgent: bool = False,
) -> Posted:
    return write(
        store, session, question, task_id=task_id, kind=ObsKind.QUESTION, to=to, urgent=urgent
    )


def answer(store: Store, session: Session, question_id: int, text: str) -> AnswerResult:
    """Answer a question; for a broadcast question the first responder wins atomically.

    A later responder gets ``ok=False`` naming who answered; their text is kept as a note.
    """
    body = check_text(text, "answer")
    with store.transaction():
        question = pending_item(store, question_id, ObsKind.QUESTION)
        task = get_task(store, question.task_id)
        chains.check_writable(store, task, session)
        if question.status == ItemStatus.WITHDRAWN:
            raise Conflict(f"Question {question.id} was withdrawn by its asker.")
        if question.status == ItemStatus.ANSWERED:
            _, by = store.resolution(question.id)
            who = find_session(store, by).handle if by else "someone"
            note = write(
                store, session, body, task_id=task.id, kind=ObsKind.NOTE, in_reply_to=question.id
            )
            return AnswerResult(
                ok=False,
                question_id=question.id,
                answered_by=who,
                note_id=note.id,
                message=f"Question {question.id} was already answered by {who}; your text was"
                f" posted as note #{note.id}.",
            )
        if question.session_id == session.id:
            raise InvalidInput(
                f"Question {question.id} is your own.", "withdraw", item_id=question.id
            )
        if not addressed_to(question, session):
            raise NotAllowed(f"Question {question.id} is addressed to {question.to}, not to you.")
        posted = chains.insert(
            store, task, session, ObsKind.ANSWER, body, to=question.handle, in_reply_to=question.id
        )
        store.set_observation_status(question.id, ItemStatus.ANSWERED, resolved_by=session.id)
        store.mark_delivered(session.id, [question.id])  # whoever answers it has seen it
        return AnswerResult(
            ok=True, question_id=question.id, answer_id=posted.id, answered_by=session.handle
        )


def withdraw(store: Store, session: Session, item_id: int) -> int:
    """The author withdraws a pending question or handoff; returns the withdraw message id."""
    with store.transaction():
        obs = store.get_observation(int(item_id))
        if obs is None or obs.kind not in (ObsKind.QUESTION, ObsKind.HANDOFF):
            raise not_a(obs, item_id, "question or handoff")
        if obs.session_id != session.id:
            raise NotAllowed(f"Only its author can withdraw {obs.kind} {obs.id}.")
        if obs.status != ItemStatus.PENDING:
            raise Conflict(f"{obs.kind.capitalize()} {obs.id} is already {obs.status}.")
        task = get_task(store, obs.task_id)
        chains.check_writable(store, task, session)
        store.set_observation_status(obs.id, ItemStatus.WITHDRAWN, resolved_by=session.id)
        return store.add_observation(
            ObsKind.WITHDRAW,
            f"withdrew {obs.kind} #{obs.id}",
            session_id=session.id,
            task_id=task.id,
            in_reply_to=obs.id,
        )


# -- decisions and blockers -------------------------------------------------------------------


def _with_detail(
    store: Store,
    session: Session,
    kind: ObsKind,
    main: str,
    label: str,
    key: str,
    detail: str | None,
    task_id: int | None,
) -> Posted:
    """A decision or blocker: the main text, then ``label: detail`` on its own line."""
    text = check_text(main, kind)
    extra = (detail or "").strip()
    if extra:
        text = f"{text}\n{label}: {check_text(extra, key.replace('_', ' '))}"
    return write(store, session, text, task_id=task_id, kind=kind, meta={key: extra})


def record_decision(
    store: Store,
    session: Session,
    decision: str,
    *,
    rationale: str | None = None,
    task_id: int | None = None,
) -> Posted:
    return _with_detail(
        store, session, ObsKind.DECISION, decision, "Rationale", "rationale", rationale, task_id
    )


def report_blocker(
    store: Store,
    session: Session,
    blocker: str,
    *,
    waiting_on: str | None = None,
    task_id: int | None = None,
) -> Posted:
    return _with_detail(
        store, session, ObsKind.BLOCKER, blocker, "Waiting on", "waiting_on", waiting_on, task_id
    )


def resolve_blocker(
    store: Store, session: Session, blocker_id: int, note: str | None = None
) -> Posted:
    with store.transaction():
        blocker = pending_item(store, blocker_id, ObsKind.BLOCKER)
        if blocker.status != ItemStatus.OPEN:
            raise Conflict(f"Blocker {blocker.id} is already {blocker.status}.")
        task = store.get_task(blocker.task_id) if blocker.task_id is not None else None
        authority.check_resolve_blocker(store, session, blocker, task)
        store.set_observation_status(blocker.id, ItemStatus.RESOLVED, resolved_by=session.id)
        return write(
            store,
            session,
            note or f"resolved blocker #{blocker.id}",
            task_id=blocker.task_id,
            kind=ObsKind.NOTE,
            in_reply_to=blocker.id,
        )
