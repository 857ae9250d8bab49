"""Handoffs: one session hands work (and its files' claims) to another.

A handoff waits until someone it is addressed to accepts it; accepting moves the listed files'
claims from the author to the acceptor in the same transaction. Standard library only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base.errors import Conflict, InvalidInput, NotAllowed
from ..base.kinds import ItemStatus, ObsKind
from ..base.models import Record, Session
from ..store import Store
from . import chains
from . import claims as claims_mod
from .messages import Posted, addressed_to
from .posts import pending_item, write
from .sessions import find_session
from .tasks import get_task


class Accepted(Record):
    """An accepted handoff and the claims that moved to the acceptor."""

    handoff_id: int
    accept_id: int
    claims: list[dict[str, Any]]


def hand_off(
    store: Store,
    session: Session,
    summary: str,
    *,
    to: str | None = None,
    files: Sequence[str] = (),
    task_id: int | None = None,
) -> Posted:
    """A pending handoff; accepting it transfers the listed files' claims to the acceptor."""
    held: list[str] = []
    skipped: list[str] = []
    if files:
        lane = claims_mod.session_lane(store, session)
        rel = list(
            dict.fromkeys(claims_mod.normalize(f, lane=lane, cwd=session.cwd) for f in files)
        )
        mine = store.list_claims(session_id=session.id, repo_id=lane.repo_id)
        patterns = {c["pattern"] for c in mine}
        for path in rel:
            (held if path in patterns else skipped).append(path)
    meta: dict[str, Any] = {"files": held}
    if skipped:
        meta["skipped"] = skipped
    return write(store, session, summary, task_id=task_id, kind=ObsKind.HANDOFF, to=to, meta=meta)


def skipped_note(skipped: Sequence[str]) -> str | None:
    """What a handoff left out: files its author held no claim on (claim them first)."""
    if not skipped:
        return None
    return (
        f"Not handed over (you hold no claim on them): {', '.join(skipped)}."
        " Claim them first, then hand off again."
    )


def accept_handoff(store: Store, session: Session, handoff_id: int) -> Accepted:
    """Accept a handoff: its files' claims move to the acceptor, all in one transaction."""
    with store.transaction():
        handoff = pending_item(store, handoff_id, ObsKind.HANDOFF)
        task = get_task(store, handoff.task_id)
        chains.check_writable(store, task, session)
        if handoff.status == ItemStatus.ACCEPTED:
            _, by = store.resolution(handoff.id)
            who = find_session(store, by).handle if by else "someone"
            raise Conflict(f"Handoff {handoff.id} was already accepted by {who}.")
        if handoff.status == ItemStatus.WITHDRAWN:
            raise Conflict(f"Handoff {handoff.id} was withdrawn by its author.")
        if handoff.session_id == session.id:
            raise InvalidInput(f"Handoff {handoff.id} is your own.", "withdraw", item_id=handoff.id)
        if not addressed_to(handoff, session):
            raise NotAllowed(f"Handoff {handoff.id} is addressed to {handoff.to}, not to you.")
        # Accepted first: on a team store, the server lets the acceptor release the author's
        # claims only once the handoff is accepted in the acceptor's name.
        store.set_observation_status(handoff.id, ItemStatus.ACCEPTED, resolved_by=session.id)
        files = [f for f in handoff.meta.get("files", []) if isinstance(f, str)]
        granted: list[dict[str, Any]] = []
        if files:
            author = find_session(store, handoff.session_id)
            lane = claims_mod.session_lane(store, author)
            released = store.release_claims(author.id, patterns=files, repo_id=lane.repo_id)
            # Only what the author still holds moves: a handoff never takes anyone else's.
            files = [f for f in files if f in {r["pattern"] for r in released}]
        if files:
            granted = claims_mod.grant(
                store, session, files, lane, task_id=task.id, note=f"from handoff #{handoff.id}"
            )
        store.mark_delivered(session.id, [handoff.id])  # whoever accepts it has seen it
        posted = chains.insert(
            store,
            task,
            session,
            ObsKind.ACCEPT,
            f"accepted handoff #{handoff.id}" + (f": {', '.join(files)}" if files else ""),
            to=handoff.handle,
            in_reply_to=handoff.id,
            meta={"files": files},
        )
        return Accepted(handoff.id, posted.id, granted)
