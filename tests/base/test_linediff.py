"""Where git's merge places a file's changes (:mod:`colony_tasks.base.linediff`): histogram
diff and xdiff's compaction without the indent heuristic."""

from __future__ import annotations

from colony_tasks.base import linediff


def test_an_unchanged_file_has_no_changes():
    assert linediff.segments(["a", "b"], ["a", "b"]) == []


def test_a_replaced_line_is_one_change_in_both_numberings():
    assert linediff.segments(["a", "b", "c"], ["a", "X", "c"]) == [(1, 2, 1, 2)]


def test_an_insertion_is_an_empty_base_range():
    assert linediff.segments(["a", "b"], ["a", "new", "b"]) == [(1, 1, 1, 2)]


def test_an_insertion_that_can_slide_goes_as_far_down_as_it_goes():
    # "x, blank" inserted after a blank line: a merge places it after the blank (slid down),
    # where a first-match diff would put it before.
    base = ["def a():", "", "def b():"]
    cur = ["def a():", "", "x", "", "def b():"]
    assert linediff.segments(base, cur) == [(2, 2, 2, 4)]


def test_a_rewrite_past_the_edit_cost_is_one_change():
    base = [str(i % 3) for i in range(300)]
    cur = [str(i % 5) for i in range(300)]
    found = linediff.segments(base, cur)
    assert found[0][0] == found[0][2] and found[-1][1] == 300 and found[-1][3] == 300
