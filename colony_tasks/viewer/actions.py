"""What a human does from the viewer, through the same core calls as the CLI.

A post goes through :func:`colony_tasks.thread.post` (or :func:`thread.answer`), a chain turn
through :func:`colony_tasks.chains.say` and :func:`chains.pass_turn`, as the human session of
:func:`colony_tasks.sessions.human_session`. The core's rules (the chain turn rule included)
apply unchanged; its :class:`~colony_tasks.errors.ColonyError` sentences reach the page as they are.
"""

from __future__ import annotations

from typing import Any

from .. import chains, thread
from ..errors import ColonyError, Conflict, InvalidInput, NotAllowed, NotFound
from ..models import Session
from ..sessions import get_task, human_session
from ..store import Store

FORM_KINDS = ("note", "question", "answer", "decision", "blocker")
STATUS = {NotFound: 404, InvalidInput: 400, NotAllowed: 403, Conflict: 409}


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
    return human_session(store, name, cwd)


def post_message(
    store: Store, name: str | None, cwd: str, task_id: int, fields: dict[str, Any]
) -> dict[str, Any]:
    """Post ``fields`` (text, kind, to, reply_to, urgent) to a task as the human.

    In a chain the text is the human's turn (:func:`chains.say`). An answer to a question that
    someone else answered first is kept as a note; ``notice`` then says so.
    """
    task = get_task(store, task_id)
    text = str(fields.get("text") or "")
    kind = str(fields.get("kind") or "note")
    to = str(fields.get("to") or "").strip() or None
    reply_to = _int_or_none(fields.get("reply_to"), "reply-to")
    urgent = str(fields.get("urgent") or "").lower() in ("1", "on", "true", "yes")
    if kind not in FORM_KINDS:
        raise InvalidInput(f"Unknown kind {kind!r}; use one of {', '.join(FORM_KINDS)}.")
    if kind == "answer" and reply_to is None:
        raise InvalidInput("An answer needs the number of the question it answers.")
    human = me(store, name, cwd)
    if task.mode == "chain" and kind == "note" and to is None and reply_to is None:
        posted = chains.say(store, human, task.id, text)
        return {"id": posted.id, "task_id": task.id, "kind": posted.kind, "notice": None}
    if kind == "answer":
        result = thread.answer(store, human, int(reply_to or 0), text)
        post_id = result.answer_id if result.ok else result.note_id
        return {
            "id": post_id,
            "task_id": task.id,
            "kind": "answer",
            "notice": result.message or None,
        }
    posted = thread.post(
        store, human, text, task_id=task.id, kind=kind, to=to, in_reply_to=reply_to, urgent=urgent
    )
    return {"id": posted.id, "task_id": task.id, "kind": posted.kind, "notice": None}


def pass_turn(
    store: Store, name: str | None, cwd: str, chain_id: int, fields: dict[str, Any]
) -> dict[str, Any]:
    """The human coordinator gives the chain's turn to a participant with a prompt."""
    target = str(fields.get("to") or "").strip()
    if not target:
        raise InvalidInput("Choose who gets the turn.")
    posted = chains.pass_turn(
        store, me(store, name, cwd), chain_id, target, str(fields.get("prompt") or "")
    )
    return {"id": posted.id, "task_id": chain_id, "kind": "turn", "notice": None}
