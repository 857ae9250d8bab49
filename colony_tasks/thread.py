"""The coordination rules of a task thread: messages, delivery, questions, handoffs, claims.

Every front end (hooks, MCP tools, CLI, viewer) calls these functions; none reimplements a rule.
Standard library only: the hook path imports this module.
"""

from __future__ import annotations

from . import claims as claims_mod
from . import settings
from .errors import Conflict, InvalidInput, NotAllowed, NotFound
from .models import Observation, Session, Task, record
from .sessions import AGENT_KINDS, find_session, get_task
from .store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

MESSAGE_KINDS = ("note", "question", "answer", "handoff", "accept", "decision", "blocker")
THREAD_KINDS = (*MESSAGE_KINDS, "claim", "release", "withdraw", "turn", "guard")
POSTABLE_KINDS = ("note", "question", "answer", "decision", "blocker")
# Kinds with rules of their own: a plain post of them would skip those rules.
OWN_RULES = {
    "answer": "An answer needs the id of the question it answers (in_reply_to, or"
    " answer_question): the first answer to a broadcast question is the one recorded.",
    "accept": "A handoff is accepted with accept_handoff(handoff_id), which moves its claims.",
}
BROADCAST = ("", "any", "all", "*")
MAX_MESSAGE_CHARS = 16_000
TOUCHED_WINDOW = 24 * 3600


class Posted(record("Posted", "id task_id kind to recipients")):
    """A stored message and, per recipient, whether it has reached its context yet."""

    __slots__ = ()


class Updates(record("Updates", "task_id items remaining cursor")):
    """Items not yet given to a reader; ``remaining`` are left for the next call."""

    __slots__ = ()


class AnswerResult(
    record(
        "AnswerResult",
        "ok question_id answer_id answered_by note_id message",
        defaults=(None, None, None, ""),
    )
):
    """``ok`` False when someone else answered first (the text is then kept as a note)."""

    __slots__ = ()


class Accepted(record("Accepted", "handoff_id accept_id claims")):
    """An accepted handoff and the claims that moved to the acceptor."""

    __slots__ = ()


# -- helpers ----------------------------------------------------------------------------------


def session_of(store: Store, ref: str | Session) -> Session:
    return ref if isinstance(ref, Session) else find_session(store, ref)


def default_task(store: Store, session: Session) -> Task:
    """The open lane task of the session's lane."""
    task = store.open_lane_task(session.lane_id) if session.lane_id else None
    if task is None:
        raise NotFound(
            f"Session {session.handle} has no open lane task; pass task_id (see `colony-tasks tasks`)."
        )
    return task


def task_for(store: Store, session: Session, task_id: int | None) -> Task:
    return default_task(store, session) if task_id is None else get_task(store, task_id)


class LoopGuard(NotAllowed):
    """Too many agent-to-agent requests in a row: a human has to weigh in."""

    def __init__(self, task_id: int, message: str) -> None:
        super().__init__(message)
        self.task_id = task_id


def _handle_of(store: Store, session_id: str | None) -> str:
    found = store.get_session(session_id) if session_id else None
    return found.handle if found else str(session_id)


def _writable(store: Store, task: Task, session: Session) -> None:
    """The single gate every thread write passes through (read inside the transaction)."""
    if task.status != "open":
        raise Conflict(f"Task {task.id} is {task.status}; it accepts no new messages.")
    if session.ended_at is not None:
        raise NotAllowed(f"Session {session.handle} has ended; start a new session to post.")
    if task.mode == "chain" and task.turn_holder != session.id:
        holder = _handle_of(store, task.turn_holder)
        raise NotAllowed(
            f"It is {holder}'s turn in chain {task.id}; only the turn holder may post."
            " Wait until the coordinator passes you the turn."
        )


def check_loop_guard(
    store: Store,
    task: Task,
    session: Session,
    kind: str,
    to: str | None,
    recipients: Sequence[Session],
) -> None:
    """Refuse the next directed agent request once the limit since a human event is reached."""
    if session.agent == "human" or to is None or kind not in ("question", "handoff", "turn"):
        return
    if kind == "turn" and all(r.agent == "human" for r in recipients):
        return  # passing the turn to a human is how loops end
    limit = int(settings.get("chains", "loop_limit") or 8)
    count = store.directed_agent_items_since(task.id, store.last_human_event(task.id))
    if count >= limit:
        raise LoopGuard(
            task.id,
            f"Loop guard: {count} agent-to-agent requests in a row on task {task.id} since the"
            f" last human input; {session.handle}'s {kind} to {to} was not sent. A human needs to"
            " weigh in (post to the thread or prompt one of the agents).",
        )


def guarded(store: Store, session: Session, action: Callable[[], Any]) -> Any:
    """Run ``action`` in one transaction; a tripped loop guard rolls it back, then posts the
    refusal to the thread in its own transaction (so the human sees it) and re-raises."""
    try:
        with store.transaction():
            return action()
    except LoopGuard as guard:
        store.add_observation("guard", str(guard), session_id=session.id, task_id=guard.task_id)
        raise


def insert_message(
    store: Store,
    task: Task,
    session: Session,
    kind: str,
    body: str,
    *,
    to: str | None = None,
    in_reply_to: int | None = None,
    urgent: bool = False,
    meta: dict[str, Any] | None = None,
    status: str | None = None,
) -> Posted:
    """Store one thread message inside the caller's transaction.

    Resolves recipients, applies the loop guard, numbers chain turns and hands a chain's turn
    back to its coordinator after anyone else speaks. Callers check :func:`_writable` first.
    """
    store.add_participant(task.id, session.id)
    addressee, recipients = resolve_recipients(store, task, session, to)
    check_loop_guard(store, task, session, kind, addressee, recipients)
    turn = store.next_turn(task.id) if task.mode == "chain" else None
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
    if task.mode == "chain" and kind != "turn" and session.id != task.coordinator:
        store.set_turn_holder(task.id, task.coordinator)
    return Posted(obs_id, task.id, kind, addressee, store.recipients(obs_id))


def check_text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"The {what} must be non-empty text.")
    if len(value) > MAX_MESSAGE_CHARS:
        raise InvalidInput(
            f"The {what} is {len(value)} characters; the limit is {MAX_MESSAGE_CHARS}."
            " Post a summary and put details in a file."
        )
    return value.strip()


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
    session = store.get_session(target) or store.get_session_by_handle(target)
    if session is None:
        raise NotFound(
            f"Session {target!r} does not exist. See who is on task {task.id} with "
            f"`colony-tasks tasks show {task.id}`."
        )
    if session.id == author.id:
        raise InvalidInput("A message cannot be addressed to its own author.")
    if not store.is_participant(task.id, session.id):
        raise NotFound(f"Session {session.handle} is not on task {task.id}; address someone on it.")
    if session.ended_at is not None:
        raise Conflict(f"Session {session.handle} has ended; address another participant.")
    return session.handle, [session]


def _addressed_to(obs: Observation, session: Session) -> bool:
    return obs.to is None or obs.to in (session.handle, session.id, session.agent)


# -- posting ----------------------------------------------------------------------------------


def post(
    store: Store,
    author: str | Session,
    text: str,
    *,
    task_id: int | None = None,
    kind: str = "note",
    to: str | None = None,
    in_reply_to: int | None = None,
    urgent: bool = False,
    meta: dict[str, Any] | None = None,
    status: str | None = None,
) -> Posted:
    """Post a message to a task (joining it if needed); stored before anyone is told."""
    session = session_of(store, author)
    if kind not in MESSAGE_KINDS:
        raise InvalidInput(f"Unknown kind {kind!r}; use one of {', '.join(MESSAGE_KINDS)}.")
    if kind in OWN_RULES:
        raise InvalidInput(OWN_RULES[kind])
    body = check_text(text, "message")
    if status is None:
        status = {"question": "pending", "handoff": "pending", "blocker": "open"}.get(kind)

    def action() -> Posted:
        task = task_for(store, session, task_id)
        _writable(store, task, session)
        if in_reply_to is not None:
            parent = store.get_observation(int(in_reply_to))
            if parent is None or parent.task_id != task.id:
                raise NotFound(f"Message {in_reply_to} is not in task {task.id}.")
        return insert_message(
            store,
            task,
            session,
            kind,
            body,
            to=to,
            in_reply_to=in_reply_to,
            urgent=urgent,
            meta=meta,
            status=status,
        )

    return guarded(store, session, action)


def ask(
    store: Store,
    author: str | Session,
    question: str,
    *,
    to: str | None = None,
    task_id: int | None = None,
    urgent: bool = False,
) -> Posted:
    return post(store, author, question, task_id=task_id, kind="question", to=to, urgent=urgent)


def _pending_item(store: Store, item_id: int, kind: str) -> Observation:
    obs = store.get_observation(int(item_id))
    if obs is None or obs.kind != kind:
        raise NotFound(f"{kind.capitalize()} {item_id} does not exist.")
    return obs


def answer(store: Store, author: str | Session, question_id: int, text: str) -> AnswerResult:
    """Answer a question; for a broadcast question the first responder wins atomically.

    A later responder gets ``ok=False`` naming who answered; their text is kept as a note.
    """
    session = session_of(store, author)
    body = check_text(text, "answer")
    with store.transaction():
        question = _pending_item(store, question_id, "question")
        task = get_task(store, question.task_id)
        _writable(store, task, session)
        if question.status == "withdrawn":
            raise Conflict(f"Question {question.id} was withdrawn by its asker.")
        if question.status == "answered":
            _, by = store.resolution(question.id)
            who = find_session(store, by).handle if by else "someone"
            note = post(store, session, body, task_id=task.id, kind="note", in_reply_to=question.id)
            return AnswerResult(
                ok=False,
                question_id=question.id,
                answered_by=who,
                note_id=note.id,
                message=f"Question {question.id} was already answered by {who}; your text was"
                f" posted as note #{note.id}.",
            )
        if question.session_id == session.id:
            raise InvalidInput(f"Question {question.id} is your own; withdraw it instead.")
        if not _addressed_to(question, session):
            raise NotAllowed(f"Question {question.id} is addressed to {question.to}, not to you.")
        posted = insert_message(
            store, task, session, "answer", body, to=question.handle, in_reply_to=question.id
        )
        store.set_observation_status(question.id, "answered", resolved_by=session.id)
        return AnswerResult(
            ok=True, question_id=question.id, answer_id=posted.id, answered_by=session.handle
        )


def withdraw(store: Store, author: str | Session, item_id: int) -> int:
    """The author withdraws a pending question or handoff; returns the withdraw message id."""
    session = session_of(store, author)
    with store.transaction():
        obs = store.get_observation(int(item_id))
        if obs is None or obs.kind not in ("question", "handoff"):
            raise NotFound(f"Question or handoff {item_id} does not exist.")
        if obs.session_id != session.id:
            raise NotAllowed(f"Only its author can withdraw {obs.kind} {obs.id}.")
        if obs.status != "pending":
            raise Conflict(f"{obs.kind.capitalize()} {obs.id} is already {obs.status}.")
        task = get_task(store, obs.task_id)
        _writable(store, task, session)
        store.set_observation_status(obs.id, "withdrawn", resolved_by=session.id)
        return store.add_observation(
            "withdraw",
            f"withdrew {obs.kind} #{obs.id}",
            session_id=session.id,
            task_id=task.id,
            in_reply_to=obs.id,
        )


# -- handoffs ---------------------------------------------------------------------------------


def hand_off(
    store: Store,
    author: str | Session,
    summary: str,
    *,
    to: str | None = None,
    files: Sequence[str] = (),
    task_id: int | None = None,
) -> Posted:
    """A pending handoff; accepting it transfers the listed files' claims to the acceptor."""
    session = session_of(store, author)
    rel: list[str] = []
    if files:
        lane = claims_mod.session_lane(store, session)
        rel = list(
            dict.fromkeys(claims_mod.normalize(f, lane=lane, cwd=session.cwd) for f in files)
        )
    return post(
        store, session, summary, task_id=task_id, kind="handoff", to=to, meta={"files": rel}
    )


def accept_handoff(store: Store, acceptor: str | Session, handoff_id: int) -> Accepted:
    """Accept a handoff: its files' claims move to the acceptor, all in one transaction."""
    session = session_of(store, acceptor)
    with store.transaction():
        handoff = _pending_item(store, handoff_id, "handoff")
        task = get_task(store, handoff.task_id)
        _writable(store, task, session)
        if handoff.status == "accepted":
            _, by = store.resolution(handoff.id)
            who = find_session(store, by).handle if by else "someone"
            raise Conflict(f"Handoff {handoff.id} was already accepted by {who}.")
        if handoff.status == "withdrawn":
            raise Conflict(f"Handoff {handoff.id} was withdrawn by its author.")
        if handoff.session_id == session.id:
            raise InvalidInput(f"Handoff {handoff.id} is your own; withdraw it instead.")
        if not _addressed_to(handoff, session):
            raise NotAllowed(f"Handoff {handoff.id} is addressed to {handoff.to}, not to you.")
        files = [f for f in handoff.meta.get("files", []) if isinstance(f, str)]
        granted: list[dict[str, Any]] = []
        if files:
            author = find_session(store, handoff.session_id)
            lane = claims_mod.session_lane(store, author)
            store.release_claims(author.id, patterns=files, repo_id=lane.repo_id)
            granted = claims_mod.grant(
                store, session, files, lane, task_id=task.id, note=f"from handoff #{handoff.id}"
            )
        store.set_observation_status(handoff.id, "accepted", resolved_by=session.id)
        posted = insert_message(
            store,
            task,
            session,
            "accept",
            f"accepted handoff #{handoff.id}" + (f": {', '.join(files)}" if files else ""),
            to=handoff.handle,
            in_reply_to=handoff.id,
            meta={"files": files},
        )
        return Accepted(handoff.id, posted.id, granted)


# -- decisions and blockers -------------------------------------------------------------------


def _post_with_detail(
    store: Store,
    author: str | Session,
    kind: str,
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
    return post(store, author, text, task_id=task_id, kind=kind, meta={key: extra})


def record_decision(
    store: Store,
    author: str | Session,
    decision: str,
    *,
    rationale: str | None = None,
    task_id: int | None = None,
) -> Posted:
    return _post_with_detail(
        store, author, "decision", decision, "Rationale", "rationale", rationale, task_id
    )


def report_blocker(
    store: Store,
    author: str | Session,
    blocker: str,
    *,
    waiting_on: str | None = None,
    task_id: int | None = None,
) -> Posted:
    return _post_with_detail(
        store, author, "blocker", blocker, "Waiting on", "waiting_on", waiting_on, task_id
    )


def resolve_blocker(
    store: Store, author: str | Session, blocker_id: int, note: str | None = None
) -> Posted:
    session = session_of(store, author)
    with store.transaction():
        blocker = _pending_item(store, blocker_id, "blocker")
        if blocker.status != "open":
            raise Conflict(f"Blocker {blocker.id} is already {blocker.status}.")
        store.set_observation_status(blocker.id, "resolved", resolved_by=session.id)
        return post(
            store,
            session,
            note or f"resolved blocker #{blocker.id}",
            task_id=blocker.task_id,
            kind="note",
            in_reply_to=blocker.id,
        )


# -- claims -----------------------------------------------------------------------------------


def claim(
    store: Store,
    author: str | Session,
    paths: Sequence[str],
    *,
    ttl_minutes: float = claims_mod.DEFAULT_TTL_MINUTES,
    note: str = "",
    task_id: int | None = None,
    cwd: str | None = None,
    announce: bool = True,
) -> claims_mod.ClaimResult:
    """Claim paths or globs (advisory: always granted, conflicts returned beside the grant)."""
    session = session_of(store, author)
    if isinstance(paths, str) or not paths:
        raise InvalidInput("Pass a non-empty list of paths or globs to claim.")
    ttl = claims_mod.validate_ttl(ttl_minutes)
    lane = claims_mod.session_lane(store, session)
    rel = list(
        dict.fromkeys(claims_mod.normalize(p, lane=lane, cwd=cwd or session.cwd) for p in paths)
    )
    with store.transaction():
        task = task_for(store, session, task_id)
        _writable(store, task, session)
        store.add_participant(task.id, session.id)
        found = claims_mod.conflicts_for(store, session, rel, lane)
        granted = claims_mod.grant(
            store, session, rel, lane, task_id=task.id, ttl_minutes=ttl, note=(note or "").strip()
        )
        if announce:
            text = f"claimed {', '.join(rel)} for {round(ttl)}m" + (
                f": {note.strip()}" if note and note.strip() else ""
            )
            store.add_observation(
                "claim",
                text,
                session_id=session.id,
                task_id=task.id,
                meta={"paths": rel, "ttl_minutes": ttl},
                paths=rel,
                repo_id=lane.repo_id,
            )
    return claims_mod.ClaimResult(granted, found)


def release(
    store: Store,
    author: str | Session,
    paths: Sequence[str] | None = None,
    *,
    task_id: int | None = None,
    announce: bool = True,
) -> list[dict[str, Any]]:
    """Release the caller's claims on ``paths`` (all of them when None)."""
    session = session_of(store, author)
    patterns = None
    lane = claims_mod.session_lane(store, session) if session.lane_id else None
    if paths is not None:
        if lane is None:
            return []
        patterns = [claims_mod.normalize(p, lane=lane, cwd=session.cwd) for p in paths]
    with store.transaction():
        released = store.release_claims(session.id, patterns=patterns)
        if released and announce:
            task = store.get_task(released[0]["task_id"]) if released[0]["task_id"] else None
            if task is not None and task.status == "open":
                names = [r["pattern"] for r in released]
                store.add_observation(
                    "release",
                    f"released {', '.join(names)}",
                    session_id=session.id,
                    task_id=task.id,
                    meta={"paths": names},
                )
    return [{"id": r["id"], "pattern": r["pattern"]} for r in released]


# -- delivery ---------------------------------------------------------------------------------


def _touched(store: Store, session: Session) -> tuple[str | None, set[str]]:
    lane = store.get_lane(session.lane_id) if session.lane_id else None
    if lane is None:
        return None, set()
    touched = store.touched_paths(session.id, lane.repo_id, store.now() - TOUCHED_WINDOW)
    touched.update(c["pattern"] for c in store.list_claims(session_id=session.id))
    return lane.repo_id, touched


def _relevant(
    store: Store, session: Session, rows: list[Observation], *, skip_delivered: bool = True
) -> list[Observation]:
    """Thread messages by others, plus others' edits of files this session touched.

    Items already delivered mid-turn (see :func:`deliver_directed`) are not repeated.
    """
    mine = [o.id for o in rows if o.session_id != session.id]
    already = store.delivered_among(session.id, mine) if skip_delivered else set()
    others = [o for o in rows if o.session_id != session.id and o.id not in already]
    edits = [o for o in others if o.kind == "edit"]
    keep_edits: set[int] = set()
    if edits:
        _, touched = _touched(store, session)
        if touched:
            by_obs = store.observation_paths([e.id for e in edits])
            for edit in edits:
                if any(claims_mod.matches(t, p) for p in by_obs.get(edit.id, []) for t in touched):
                    keep_edits.add(edit.id)
    return [o for o in others if o.kind != "edit" or o.id in keep_edits]


def _is_my_turn(obs: Observation, session: Session) -> bool:
    return obs.kind == "turn" and obs.to is not None and obs.to in (session.handle, session.id)


def _fold_turns(items: list[Observation], session: Session) -> list[Observation]:
    """Drop chain messages that a turn block addressed to this session already contains."""
    turns = [o for o in items if _is_my_turn(o, session)]
    if not turns:
        return items
    last = turns[-1]
    since = int(last.meta.get("since") or 0)
    return [o for o in items if not (o.task_id == last.task_id and since < o.id < last.id)]


def updates_since(
    store: Store,
    reader: str | Session,
    task_id: int | None = None,
    *,
    since_id: int | None = None,
    limit: int | None = None,
) -> Updates:
    """What ``reader`` has not been given yet, oldest first, excluding its own items.

    Without ``since_id`` the participant cursor advances in the same ``BEGIN IMMEDIATE``
    transaction, so two concurrent callers for one session never receive the same item. With
    ``since_id`` it only reads. ``limit`` delivers the first items and leaves the rest (counted
    in ``remaining``) for the next call.
    """
    session = session_of(store, reader)
    if limit is not None and limit < 1:
        raise InvalidInput("limit must be at least 1.")
    kinds = (*THREAD_KINDS, "edit")
    with store.transaction():
        task = task_for(store, session, task_id)
        if since_id is not None:
            rows = store.observations_after(task.id, int(since_id), kinds=kinds, limit=5000)
            items = _relevant(store, session, rows, skip_delivered=False)
            shown = items[:limit] if limit else items
            return Updates(task.id, shown, len(items) - len(shown), int(since_id))
        store.add_participant(task.id, session.id)
        cursor = store.get_cursor(task.id, session.id) or 0
        rows = store.observations_after(task.id, cursor, kinds=kinds, limit=5000)
        items = _fold_turns(_relevant(store, session, rows), session)
        if limit and len(items) > limit:
            shown, remaining = items[:limit], len(items) - limit
            new_cursor = shown[-1].id
        else:
            shown, remaining = items, 0
            new_cursor = rows[-1].id if rows else cursor
        if new_cursor > cursor:
            store.set_cursor(task.id, session.id, new_cursor)
        store.mark_delivered(session.id, [o.id for o in shown])
        return Updates(task.id, shown, remaining, new_cursor)


def mark_briefed(store: Store, reader: str | Session, task_id: int) -> None:
    """The session was just briefed on the task (SessionStart): its history is not repeated
    as news; only what comes after is delivered. Pending items stay in :func:`pending_for`."""
    session = session_of(store, reader)
    with store.transaction():
        store.set_cursor(task_id, session.id, store.max_observation_id(task_id))


def deliver_directed(store: Store, reader: str | Session) -> list[Observation]:
    """Mid-turn delivery: undelivered items addressed to the session or marked urgent.

    They are marked delivered, so the next :func:`updates_since` does not repeat them.
    """
    session = session_of(store, reader)
    if not store.has_pending_directed(session.id):
        return []
    with store.transaction():
        items = store.pending_directed(session.id)
        store.mark_delivered(session.id, [o.id for o in items])
        for turn in (o for o in items if _is_my_turn(o, session)):
            # The turn block carries the chain's history: do not deliver it again piecemeal.
            store.set_cursor(turn.task_id, session.id, turn.id - 1)
    return items


def pending_for(
    store: Store, reader: str | Session, task_id: int | None = None
) -> list[Observation]:
    """Questions and handoffs waiting on this session (addressed to it, its kind, or anyone)."""
    session = session_of(store, reader)
    task_ids = (
        [task_id] if task_id is not None else [t.id for t in store.tasks_of_session(session.id)]
    )
    return store.open_items(
        kinds=("question", "handoff"),
        statuses=("pending",),
        task_ids=task_ids,
        exclude_author=session.id,
        to_any_of=(session.handle, session.id, session.agent),
    )


def summary(store: Store, task_id: int) -> dict[str, Any]:
    """A task's open state: pending questions and handoffs, open blockers, decisions, claims."""
    task = get_task(store, task_id)
    lane = store.get_lane(task.lane_id) if task.lane_id else None
    return {
        "task": task,
        "lane": lane,
        "participants": store.participants(task.id),
        "questions": store.open_items(
            kinds=("question",), statuses=("pending",), task_ids=[task.id]
        ),
        "handoffs": store.open_items(kinds=("handoff",), statuses=("pending",), task_ids=[task.id]),
        "blockers": store.open_items(kinds=("blocker",), statuses=("open",), task_ids=[task.id]),
        "decisions": store.timeline(task.id, limit=10, kinds=("decision",)),
        "claims": claims_mod.list_live(store, repo_id=lane.repo_id) if lane else [],
        "undelivered": store.undelivered_in_task(task.id),
    }


def end_session(store: Store, session_ref: str | Session) -> dict[str, Any]:
    """Mark the session ended, release its claims, and mark its undelivered items."""
    session = session_of(store, session_ref)
    with store.transaction():
        store.end_session(session.id)
        released = store.release_claims(session.id)
        undeliverable = store.mark_undeliverable(session.id)
    return {"released": len(released), "undeliverable": undeliverable}
