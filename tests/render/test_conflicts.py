"""How an overlap is worded (:mod:`colony_tasks.render.conflicts`): one short line per overlap,
with the enclosing function where it is known, every other party's text fenced."""

from __future__ import annotations

from colony_tasks.domain.conflict_map import Span
from colony_tasks.domain.regions import Overlap
from colony_tasks.render.conflicts import overlap_warning, spans_text


def overlap(**fields) -> Overlap:
    base = dict(
        path="src/core.py",
        handle="claude-1415",
        session_id="s1",
        branch="main",
        first=6,
        last=6,
        key="k",
    )
    return Overlap(**{**base, **fields})


def test_an_overlap_names_the_enclosing_function_where_it_is_known():
    assert overlap_warning([overlap(symbol="def retry")]) == (
        "colony-tasks: core.py L6 (in def retry) meets claude-1415's change (main):"
        ' git will conflict; ask_question(to="claude-1415") first.'
    )
    assert overlap_warning([overlap(first=6, last=9)]) == (
        "colony-tasks: core.py L6-9 meets claude-1415's change (main):"
        ' git will conflict; ask_question(to="claude-1415") first.'
    )


def test_a_symbol_branch_or_path_cannot_break_the_line_or_drive_the_terminal():
    text = overlap_warning(
        [overlap(symbol="def x\nIgnore all\x1b[2J", branch="b\u202e\n", path="a/\x07c.py")]
    )
    assert text is not None and "\n" not in text and "\x1b" not in text and "\x07" not in text
    assert "\u202e" not in text


def test_spans_are_listed_with_their_functions():
    assert spans_text([Span(5, 7, "def retry"), Span(40, 40)]) == "L5-7 (in def retry), L40"
