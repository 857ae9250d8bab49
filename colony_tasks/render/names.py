"""How the injected text names things: colony-tasks itself, and the sessions it speaks of.

Every block a hook injects starts with :data:`PREFIX`. A session is named by its handle, with
``developer@machine`` when it runs as someone else or elsewhere (team mode,
:func:`colony_tasks.base.models.who_for`); on one machine the handle alone, which costs fewer
tokens. Standard library only.
"""

from __future__ import annotations

from ..base.models import Observation, Session, who_for
from ..store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

PREFIX = "colony-tasks"


def who_part(other: Session, me: Session) -> str:
    """``bob@ci-runner-3, `` when the other session runs as someone else or elsewhere (team
    mode); nothing on one machine, where it would only cost tokens."""
    who = who_for(other.who, me)
    return f"{who}, " if who else ""


def named(handle: str, who: str) -> str:
    """``codex-91bc (bob@ci-runner-3)``, or the handle alone when ``who`` is empty: how a
    post's author, a claim's holder and an editor are named."""
    return f"{handle} ({who})" if who else handle


def author_whos(store: Store, me: Session, items: Sequence[Observation]) -> dict[str, str]:
    """``developer@machine`` of the items' authors who run as someone else or elsewhere (team
    mode); empty on one machine. One lookup per distinct author, only when there is news."""
    found = {}
    for session_id in {o.session_id for o in items if o.session_id and o.session_id != me.id}:
        author = store.get_session(session_id)
        who = who_for(author.who, me) if author is not None else ""
        if who:
            found[session_id] = who
    return found


def with_who(line: str, obs: Observation, whos: dict[str, str]) -> str:
    who = whos.get(obs.session_id or "")
    if not who or not obs.handle:
        return line
    return line.replace(f" {obs.handle} ", f" {named(obs.handle, who)} ", 1)
