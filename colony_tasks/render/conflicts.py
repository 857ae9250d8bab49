"""Warnings about files other sessions hold or changed: before or after an edit, and once per
file a session reads while another holds it. Each says who, how recently, and what to do next.
Standard library only.
"""

from __future__ import annotations

from ..base.models import Observation
from ..base.text import ago, clip, one_line
from ..domain import claims as claims_mod
from .lines import PREFIX, named

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

MAX_CONFLICT_LINES = 20


def conflict_warning(
    conflicts: Sequence[claims_mod.PathConflict], *, after: bool, now: float
) -> str | None:
    """Before (or after) an edit: who holds or recently edited these paths, and what to do."""
    lines = []
    suggest = None
    for conflict in conflicts:
        for h in conflict.claims:
            auto = h.auto
            if h.stale:
                state = "stale: holder quiet for 30m+"
            elif auto:
                state = f"editing it since {ago(h.since, now)}"
            else:
                state = f"claimed {ago(h.since, now)}"
            where = f" on branch {one_line(h.branch)} (merge risk)" if h.other_lane else ""
            note = f': "{clip(h.note, 60)}"' if h.note and not auto else ""
            holder = named(h.handle, h.who)
            lines.append(f"{one_line(conflict.path)} is held by {holder}{where} ({state}{note}).")
            if not h.other_lane and suggest is None:
                suggest = h.handle
        for e in conflict.recent_edits:
            if any(h.session_id == e.session_id for h in conflict.claims):
                continue
            where = " on another branch" if e.other_lane else ""
            editor = named(e.handle, e.who)
            lines.append(
                f"{one_line(conflict.path)} was edited {ago(e.at, now)} by {editor}{where}."
            )
            if suggest is None and not e.other_lane:
                suggest = e.handle
    if not lines:
        return None
    if len(lines) > MAX_CONFLICT_LINES:  # a patch naming 20,000 held files: a bounded warning
        more = len(lines) - MAX_CONFLICT_LINES
        lines = [
            *lines[:MAX_CONFLICT_LINES],
            f"… and {more} more (`colony-tasks claims` lists every claim).",
        ]
    verb = (
        "You just edited a file another session is working on"
        if after
        else "Heads-up before this edit"
    )
    out = [f"{PREFIX}: {verb}:", *lines]
    if suggest:
        path = one_line(conflicts[0].path)
        out.append(
            f'Next: ask_question(to="{suggest}", question="I need {path} — are you done with it?")'
            f' or claim_file(paths=["{path}"]) once agreed.'
        )
    return "\n".join(out)


def read_note(path: str, holder: dict, decision: Observation | None, now: float) -> str:
    """``colony-tasks: api.py is held by codex-91bc (claimed 4m ago); latest decision naming
    it: #12 "..."`` — one line, for a session reading a file another session holds."""
    auto = holder["auto"]
    how = "editing it" if auto else "claimed"
    line = f"{PREFIX}: {one_line(path)} is held by {holder['handle']} ({how} since {ago(holder['created_at'], now)})"
    if decision is not None:
        line += f'; latest decision naming it: #{decision.id} "{clip(decision.text, 120)}"'
    return line + f'. Before editing it: ask_question(to="{holder["handle"]}", ...).'
