"""Compact one-line renderings of thread items and human-readable times, shared by the CLI,
hooks, MCP tools and viewer.

Standard library only.
"""

from __future__ import annotations

import time

from .models import Observation

LINE_CHARS = 240
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


def clip(text: str, limit: int = LINE_CHARS) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


# -- times ---------------------------------------------------------------------------------


def ago(then: float | None, now: float | None = None) -> str:
    """``just now``, ``4m ago``, ``3h ago``, ``2d ago``."""
    if then is None:
        return "never"
    seconds = max(0.0, (time.time() if now is None else now) - then)
    if seconds < 45:
        return "just now"
    if seconds < 3600:
        return f"{round(seconds / 60) or 1}m ago"
    if seconds < 86400:
        return f"{round(seconds / 3600)}h ago"
    return f"{round(seconds / 86400)}d ago"


def iso(ts: float | None) -> str:
    if ts is None:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def minutes(seconds: float) -> str:
    return f"{max(0, round(seconds / 60))}m"
