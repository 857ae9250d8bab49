"""One-line items and human-readable times (:mod:`colony_tasks.render.lines`)."""

from __future__ import annotations

from colony_tasks.base.models import Observation
from colony_tasks.base.text import ago, clip, minutes
from colony_tasks.render.lines import item_line

NOW = 1_800_000_000.0


def obs(**fields) -> Observation:
    base = dict(
        id=12,
        task_id=1,
        session_id="s2",
        kind="question",
        text="Which   port\ndoes the api use?",
        meta={},
        created_at=NOW - 240,
        handle="codex-91bc",
    )
    return Observation(**{**base, **fields})


def test_ago_rounds_to_the_unit_a_reader_wants():
    assert [ago(NOW - s, NOW) for s in (0, 44, 46, 240, 3 * 3600, 2 * 86400)] == [
        "just now",
        "just now",
        "1m ago",
        "4m ago",
        "3h ago",
        "2d ago",
    ]
    assert ago(None, NOW) == "never" and ago(NOW + 60, NOW) == "just now"


def test_clip_folds_whitespace_and_marks_what_it_cut():
    assert clip("a  b\n c") == "a b c"
    assert clip("x" * 10, 5) == "xxxx…" and len(clip("y" * 500)) == 240
    assert minutes(59) == "1m" and minutes(-5) == "0m"


def test_an_item_line_names_author_kind_addressee_state_and_age():
    line = item_line(obs(to="claude-3f2a", status="pending", urgent=True), now=NOW)
    assert line == (
        "#12 codex-91bc QUESTION → claude-3f2a [urgent] [pending] (4m ago):"
        " Which port does the api use?"
    )
    note = item_line(obs(kind="note", to="any", status="pending", in_reply_to=3))
    assert note == "#12 codex-91bc note (re #3): Which port does the api use?"
