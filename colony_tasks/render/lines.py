"""Compact one-line renderings of thread items, shared by the CLI, hooks, MCP tools and viewer.

Standard library only.
"""

from __future__ import annotations

from ..base.models import Observation
from ..base.text import LINE_CHARS, ago, clip

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
    who = obs.handle or obs.session_id or "?"
    label = KIND_LABEL.get(obs.kind, obs.kind)
    target = f" → {obs.to}" if obs.to and obs.to != "any" else ""
    reply = f" (re #{obs.in_reply_to})" if obs.in_reply_to else ""
    flag = " [urgent]" if obs.urgent else ""
    state = (
        f" [{obs.status}]" if obs.status and obs.kind in ("question", "handoff", "blocker") else ""
    )
    when = f" ({ago(obs.created_at, now)})" if now is not None else ""
    return f"#{obs.id} {who} {label}{target}{reply}{flag}{state}{when}: {clip(obs.text, limit)}"
