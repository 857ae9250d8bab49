"""Compact one-line renderings of thread items, shared by the CLI, hooks, MCP tools and viewer,
and how the injected text names things: colony-tasks itself (every block a hook injects starts
with :data:`PREFIX`) and the sessions it speaks of — by handle, with ``developer@machine`` when
a session runs as someone else or elsewhere (team mode, :func:`colony_tasks.base.models.who_for`);
on one machine the handle alone, which costs fewer tokens.

Standard library only.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..base.models import Observation, Session, who_for
from ..base.text import LINE_CHARS, ago, clip, one_line
from ..store import Store

KIND_LABEL = {
    "note": "note",
    "question": "QUESTION",
    "answer": "answer",
    "handoff": "HANDOFF",
    "accept": "accepted handoff",
    "decision": "DECISION",
    "blocker": "BLOCKER",
    "claim": "claimed",
    "release": "released",
    "edit": "edited",
    "prompt": "prompt",
    "command": "ran",
    "work": "plan",
    "interface": "INTERFACE CHANGE",
}


def item_line(obs: Observation, *, now: float | None = None, limit: int = LINE_CHARS) -> str:
    """``#12 codex-91bc QUESTION → claude-3f2a (4m ago): text``; a note's state is not shown."""
    who = one_line(obs.handle or obs.session_id or "?")
    label = KIND_LABEL.get(obs.kind, obs.kind)
    target = f" → {one_line(obs.to)}" if obs.to and obs.to != "any" else ""
    reply = f" (re #{obs.in_reply_to})" if obs.in_reply_to else ""
    flag = " [urgent]" if obs.urgent else ""
    state = (
        f" [{obs.status}]" if obs.status and obs.kind in ("question", "handoff", "blocker") else ""
    )
    when = f" ({ago(obs.created_at, now)})" if now is not None else ""
    return f"#{obs.id} {who} {label}{target}{reply}{flag}{state}{when}: {clip(obs.text, limit)}"


# -- naming ---------------------------------------------------------------------------------


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
