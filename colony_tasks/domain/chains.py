"""Chains: tasks in turn-taking mode, with one coordinator and one turn holder at a time.

Every chain rule lives here. Every write to a task passes :func:`check_writable` and is stored
through :func:`insert` (posts, questions, answers, handoffs and turns alike), so the MCP tools,
the CLI, the viewer and the hooks cannot bypass them:

- the creator is the coordinator and holds the turn first;
- only the coordinator adds participants, passes the turn and closes the chain;
- only the turn holder may post; after anyone but the coordinator posts, the turn returns to
  the coordinator;
- every message gets the next turn number; turn passes are ``turn`` messages (turn bars);
- a newly added participant receives the full history with its prompt as one block, a
  participant passed the turn receives what was said since it last spoke.

Standard library only: hooks render turn blocks.
"""

from __future__ import annotations

from typing import Any

from ..base.errors import Conflict, InvalidInput, NotAllowed
from ..base.kinds import MESSAGE_KINDS, ObsKind, TaskMode, TaskStatus
from ..base.models import Observation, Record, Session, Task
from ..base.text import one_line
from ..store import Store
from . import messages
from .messages import Posted
from .sessions import find_session
from .tasks import get_task, handle_of

CHAIN_KINDS = (*MESSAGE_KINDS, ObsKind.TURN, ObsKind.GUARD)


class ChainView(Record):
    """A chain for display: roles as handles; no turn holder once it is closed."""

    chain_id: int
    title: str
    status: str
    coordinator: str
    turn_holder: str | None


def view(store: Store, task: Task) -> ChainView:
    return ChainView(
        chain_id=task.id,
        title=task.title,
        status=task.status,
        coordinator=handle_of(store, task.coordinator) or "?",
        turn_holder=handle_of(store, task.turn_holder) if task.status == TaskStatus.OPEN else None,
    )


# -- the write rules ------------------------------------------------------------------------


def check_writable(store: Store, task: Task, session: Session) -> None:
    """The single gate every thread write passes through (read inside the transaction):
    an open task, a live author, and on a chain, the turn."""
    messages.writable(task, session)
    if task.mode == TaskMode.CHAIN and task.turn_holder != session.id:
        holder = handle_of(store, task.turn_holder)
        raise NotAllowed(
            f"It is {holder}'s turn in chain {task.id}; only the turn holder may post."
            " Wait until the coordinator passes you the turn."
        )


def check_plannable(store: Store, task: Task, session: Session) -> None:
    """The gate for adding to a task's plan: any writer may, but a chain's plan is the
    coordinator's (see :mod:`colony_tasks.domain.planning`)."""
    check_writable(store, task, session)
    if task.mode == TaskMode.CHAIN and task.coordinator != session.id:
        raise NotAllowed(
            f"Only the coordinator of chain {task.id} ({handle_of(store, task.coordinator)})"
            " can plan its work."
        )


def insert(
    store: Store, task: Task, session: Session, kind: ObsKind, body: str, **fields: Any
) -> Posted:
    """Store a message (see :func:`messages.insert_message`) with the chain rules applied:
    on a chain every message gets the next turn number, and after anyone but the coordinator
    speaks the turn returns to the coordinator."""
    chain = task.mode == TaskMode.CHAIN
    turn = store.next_turn(task.id) if chain else None
    posted = messages.insert_message(store, task, session, kind, body, turn=turn, **fields)
    if chain and kind != ObsKind.TURN and session.id != task.coordinator and task.coordinator:
        store.set_turn_holder(task.id, task.coordinator)
    return posted


def get_chain(store: Store, chain_id: int) -> Task:
    task = get_task(store, chain_id)
    if task.mode != TaskMode.CHAIN:
        raise InvalidInput(f"Task {task.id} is not a chain.", "chain_create")
    return task


def _coordinator_only(task: Task, session: Session, action: str) -> None:
    if task.coordinator != session.id:
        raise NotAllowed(f"Only the coordinator of chain {task.id} can {action}.")
    if task.status != TaskStatus.OPEN:
        raise Conflict(f"Chain {task.id} is {task.status}; it accepts no more turns.")


def create(
    store: Store, creator: Session, name: str, participants: list[str] | None = None
) -> Task:
    """A new chain; the caller coordinates it and holds the first turn."""
    title = one_line(name)  # one line, fenced: every front end shows it as a name
    if not title:
        raise InvalidInput("A chain needs a non-empty name.")
    with store.transaction():
        chain_id = store.insert_task(
            title, mode=TaskMode.CHAIN, created_by=creator.id, coordinator=creator.id
        )
        store.add_participant(chain_id, creator.id)
        for ref in participants or []:
            store.add_participant(chain_id, find_session(store, ref).id)
        task = get_task(store, chain_id)
        insert(
            store,
            task,
            creator,
            ObsKind.TURN,
            f"{creator.handle} started chain “{title}” and holds the turn",
            meta={"event": "create"},
        )
    return get_task(store, chain_id)


def _give_turn(
    store: Store, task: Task, coordinator: Session, target: Session, prompt: str, event: str
) -> Posted:
    since = 0 if event == "add" else _last_spoke(store, task.id, target.id)
    posted = insert(
        store,
        task,
        coordinator,
        ObsKind.TURN,
        prompt,
        to=target.handle,
        meta={"event": event, "from": coordinator.handle, "since": since},
    )
    store.set_turn_holder(task.id, target.id)
    return posted


def add(store: Store, coordinator: Session, chain_id: int, participant: str, prompt: str) -> Posted:
    """Add a session and give it the turn; it receives the full history with ``prompt``."""
    text = messages.check_text(prompt, "prompt")

    def action() -> Posted:
        task = get_chain(store, chain_id)
        _coordinator_only(task, coordinator, "add participants")
        target = find_session(store, participant)
        if target.id == coordinator.id:
            raise InvalidInput("The coordinator is already on the chain.")
        if target.ended_at is not None:
            raise Conflict(f"Session {target.handle} has ended; add an active session.")
        store.add_participant(task.id, target.id)
        return _give_turn(store, task, coordinator, target, text, "add")

    return messages.guarded(store, coordinator, action)


def pass_turn(store: Store, coordinator: Session, chain_id: int, to: str, prompt: str) -> Posted:
    """Give the turn to a participant with ``prompt`` (it gets what it missed since it spoke)."""
    text = messages.check_text(prompt, "prompt")

    def action() -> Posted:
        task = get_chain(store, chain_id)
        _coordinator_only(task, coordinator, "pass the turn")
        target = find_session(store, to)
        if not store.is_participant(task.id, target.id):
            raise NotAllowed(
                f"{target.handle} is not on chain {task.id}.",
                "chain_add",
                chain_id=task.id,
                who=target.handle,
            )
        if target.id == coordinator.id:
            store.set_turn_holder(task.id, coordinator.id)
            return insert(
                store,
                task,
                coordinator,
                ObsKind.TURN,
                text,
                meta={"event": "take", "from": coordinator.handle},
            )
        return _give_turn(store, task, coordinator, target, text, "pass")

    return messages.guarded(store, coordinator, action)


def give_turn(store: Store, coordinator: Session, chain_id: int, to: str, prompt: str) -> Posted:
    """Pass the turn to ``to``, adding it first when it is not on the chain yet.

    A newcomer gets the full history (as :func:`add`), a participant what it missed (as
    :func:`pass_turn`). The MCP tool ``chain_pass`` calls this, so one tool covers both.
    """
    chain = get_chain(store, chain_id)
    target = find_session(store, to)
    if store.is_participant(chain.id, target.id):
        return pass_turn(store, coordinator, chain_id, to, prompt)
    return add(store, coordinator, chain_id, to, prompt)


def close(store: Store, coordinator: Session, chain_id: int) -> Task:
    """Complete the chain: no more posts; the history stays readable."""
    with store.transaction():
        task = get_chain(store, chain_id)
        _coordinator_only(task, coordinator, "close it")
        store.set_turn_holder(task.id, coordinator.id)
        insert(
            store,
            task,
            coordinator,
            ObsKind.TURN,
            f"{coordinator.handle} closed the chain",
            meta={"event": "close"},
        )
        store.set_task_status(task.id, TaskStatus.DONE)
    return get_task(store, chain_id)


def history(store: Store, chain_id: int, *, after_id: int = 0) -> list[Observation]:
    get_chain(store, chain_id)
    return store.observations_after(chain_id, after_id, kinds=CHAIN_KINDS, limit=100_000)


def _last_spoke(store: Store, chain_id: int, session_id: str) -> int:
    spoken = [o.id for o in history(store, chain_id) if o.session_id == session_id]
    return spoken[-1] if spoken else 0
