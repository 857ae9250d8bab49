"""What a human does from the viewer, through the same core actions as the CLI.

Form fields are parsed here; every act (posting, answering with a reply-to, passing a chain's
turn, changing the plan, withdrawing, resolving a blocker) is one :mod:`colony_tasks.usecases.actions`
call made as the human session — registered in the same transaction (``actions.as_human``), so
an act the core refuses leaves no participant behind. The core's rules (which kinds may be
posted, what an answer needs, whose items move, the chain turn rule) apply unchanged and its
:class:`~colony_tasks.base.errors.ColonyError` sentences reach the page as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..base.errors import ColonyError, Conflict, InvalidInput, NotAllowed, NotFound
from ..base.models import Session
from ..store import Store
from ..usecases import actions

T = TypeVar("T")
STATUS = {NotFound: 404, InvalidInput: 400, NotAllowed: 403, Conflict: 409}
# How the viewer words the core's next steps (colony_tasks.base.errors.STEPS): its own pages.
STEP_WORDING = {
    "list_tasks": "See the open tasks on the lanes page.",
    "list_sessions": "See who is here on the sessions page.",
    "show_task": "See who is on task {task_id} on its page.",
    "withdraw": "To take it back, press Withdraw on #{item_id}.",
    "chain_add": "Give {who} the turn to add it to chain {chain_id}.",
    "chain_create": "Start a chain with `colony-tasks chain create NAME`.",
    "embed": "Run `colony-tasks embed` first.",
    "plan_show": "See the plan beside the thread.",
    "take_next": "Take the next ready item with `colony-tasks plan take`.",
}


def status_for(error: ColonyError) -> int:
    """The HTTP status for a core error (400 for any kind not listed)."""
    for kind, code in STATUS.items():
        if isinstance(error, kind):
            return code
    return 400


def _int_or_none(value: Any, what: str) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(str(value).lstrip("#"))
    except ValueError:
        raise InvalidInput(f"The {what} must be a message number, like 12.") from None


def me(store: Store, name: str | None, cwd: str) -> Session:
    """The viewer's human session (registered, or refreshed, on each action)."""
    return actions.human(store, name, cwd)


def acting(store: Store, name: str | None, cwd: str, act: Callable[[Session], T]) -> T:
    """``act`` as the viewer's human, registered in the same transaction (nothing is left of
    a human whose act the core refused)."""
    return actions.acting(store, lambda: me(store, name, cwd), act)


def post_message(
    store: Store, name: str | None, cwd: str, task_id: int, fields: dict[str, Any]
) -> dict[str, Any]:
    """Post ``fields`` (text, kind, to, reply_to, urgent) to a task as the human.

    An answer to a question that someone else answered first is kept as a note; ``notice``
    then says so.
    """
    kind = str(fields.get("kind") or "note")
    reply_to = _int_or_none(fields.get("reply_to"), "reply-to")
    posted = acting(
        store,
        name,
        cwd,
        lambda human: actions.post(
            store,
            human,
            str(fields.get("text") or ""),
            kind=kind,
            task_id=task_id,
            to=str(fields.get("to") or "").strip() or None,
            in_reply_to=reply_to,
            urgent=str(fields.get("urgent") or "").lower() in ("1", "on", "true", "yes"),
        ),
    )
    return {"id": posted.id, "task_id": posted.task_id, "kind": kind, "notice": posted.message}


def pass_turn(
    store: Store, name: str | None, cwd: str, chain_id: int, fields: dict[str, Any]
) -> dict[str, Any]:
    """The human coordinator gives the chain's turn to a participant with a prompt."""
    target = str(fields.get("to") or "").strip()
    if not target:
        raise InvalidInput("Choose who gets the turn.")
    prompt = str(fields.get("prompt") or "")
    posted = acting(
        store, name, cwd, lambda human: actions.chain_pass(store, human, chain_id, target, prompt)
    )
    return {"id": posted.id, "task_id": chain_id, "kind": "turn", "notice": None}


PLAN_ACTIONS = ("add", "reassign", "drop")


def _ids(value: Any, what: str) -> list[int]:
    """``"3, #4"`` or ``[3, 4]`` as item ids."""
    parts = value if isinstance(value, list) else str(value or "").replace(",", " ").split()
    return [n for n in (_int_or_none(p, what) for p in parts) if n is not None]


def plan_action(
    store: Store, name: str | None, cwd: str, task_id: int, fields: dict[str, Any]
) -> dict[str, Any]:
    """The human changes the task's plan: ``action`` add (title, files, after), reassign
    (item, to; empty ``to`` reopens it) or drop (item, reason)."""
    action = str(fields.get("action") or "")
    if action not in PLAN_ACTIONS:
        raise InvalidInput(f"Unknown plan action {action!r}; use one of {', '.join(PLAN_ACTIONS)}.")
    acting(store, name, cwd, lambda human: _plan(store, human, task_id, action, fields))
    return {
        "id": store.max_observation_id(task_id),
        "task_id": task_id,
        "kind": "work",
        "notice": None,
    }


def _plan(store: Store, human: Session, task_id: int, action: str, fields: dict[str, Any]) -> None:
    if action == "add":
        files = fields.get("files") or ""
        spec = {
            "title": str(fields.get("title") or ""),
            "files": files if isinstance(files, list) else str(files).replace(",", " ").split(),
            "depends_on": [f"#{i}" for i in _ids(fields.get("after"), "item after")],
            "description": str(fields.get("description") or ""),
        }
        actions.plan_work(store, human, [spec], task_id=task_id)
    elif action in ("reassign", "drop"):
        item_id = _int_or_none(fields.get("item"), "item")
        if item_id is None:
            raise InvalidInput("Choose the item by its number, like 12.")
        if action == "reassign":
            to = str(fields.get("to") or "").strip() or None
            actions.reassign_work(store, human, item_id, to, task_id=task_id)
        else:
            reason = str(fields.get("reason") or "") or None
            actions.drop_work(store, human, item_id, reason, task_id=task_id)


def withdraw_item(
    store: Store, name: str | None, cwd: str, task_id: int, fields: dict[str, Any]
) -> dict[str, Any]:
    """The human withdraws their own pending question or handoff (``item_id``)."""
    item_id = _int_or_none(fields.get("item_id"), "question or handoff")
    if item_id is None:
        raise InvalidInput("Choose the question or handoff to withdraw.")
    done = acting(store, name, cwd, lambda human: actions.withdraw(store, human, item_id))
    return {"id": done.id, "task_id": done.task_id, "kind": "withdraw", "notice": None}


def resolve_blocker(
    store: Store, name: str | None, cwd: str, task_id: int, fields: dict[str, Any]
) -> dict[str, Any]:
    """The human marks an open blocker (``blocker_id``) resolved, with an optional ``note``."""
    blocker_id = _int_or_none(fields.get("blocker_id"), "blocker")
    if blocker_id is None:
        raise InvalidInput("Choose the blocker to resolve.")
    note = str(fields.get("note") or "").strip() or None
    done = acting(
        store, name, cwd, lambda human: actions.resolve_blocker(store, human, blocker_id, note)
    )
    return {"id": done.id, "task_id": done.task_id, "kind": "note", "notice": None}
