"""Warnings about files other sessions hold or changed: before or after an edit, and once per
file a session reads while another holds it. Each says who, where (how recently), and what
to do next. Standard library only.
"""

from __future__ import annotations

from ..base.models import Observation
from ..base.text import ago, clip, one_line
from ..domain import claims as claims_mod
from ..domain.regions import Overlap
from .lines import PREFIX, named

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..domain.conflict_map import Span  # the map itself is the CLI's and viewer's

MAX_CONFLICT_LINES = 20
MAX_OVERLAP_LINES = 5


def overlap_warning(overlaps: Sequence[Overlap]) -> str | None:
    """``colony-tasks: core.py L488-492 (in def retry) meets codex-91bc's change (agent/x):
    git will conflict; ask_question(to="codex-91bc") first.`` — one line per other session
    and place; the enclosing function or class where the language is known."""
    lines = []
    for o in overlaps[:MAX_OVERLAP_LINES]:
        where = _where(o.first, o.last, o.symbol)
        branch = f" ({one_line(o.branch)})" if o.branch else ""
        lines.append(
            f"{PREFIX}: {one_line(o.path.rsplit('/', 1)[-1])} {where} meets"
            f" {named(o.handle, o.who)}'s change{branch}: git will conflict;"
            f' ask_question(to="{o.handle}") first.'
        )
    if len(overlaps) > MAX_OVERLAP_LINES:
        lines.append(f"… and {len(overlaps) - MAX_OVERLAP_LINES} more (`colony-tasks conflicts`).")
    return "\n".join(lines) or None


def spans_text(spans: Sequence[Span]) -> str:
    """``L5-7 (in def retry), L40``: a side's lines in ``colony-tasks conflicts`` and the viewer."""
    return ", ".join(_where(s.first, s.last, s.symbol) for s in spans)


def _where(first: int, last: int, symbol: str) -> str:
    where = f"L{first}" if first == last else f"L{first}-{last}"
    return f"{where} (in {one_line(symbol)})" if symbol else where


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
