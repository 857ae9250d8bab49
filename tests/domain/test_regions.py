"""Regions and the rule of the forecast (:mod:`colony_tasks.domain.regions`): two sessions'
changes of one file meet as git's merge decides — overlapping or touching, unless both write
the same text — and an edit's region comes from what the tool says it will write."""

from __future__ import annotations

import pytest

from colony_tasks.domain import regions

BASE = [f"line {i}" for i in range(1, 7)]  # 6 lines, as in git merge-file checks


def change(lines: list[str]) -> list[regions.Change]:
    return regions.changes_of(BASE, lines)


def edited(**at: str) -> list[str]:
    out = list(BASE)
    for key, text in sorted(at.items(), reverse=True):
        i = int(key[1:]) - 1
        if key[0] == "r":
            out[i] = text
        elif key[0] == "i":  # insert after line i+1
            out.insert(i + 1, text)
        else:
            del out[i]
    return out


# The cases checked against `git merge-file` (research notes): what git conflicts on.
@pytest.mark.parametrize(
    ("a", "b", "conflict"),
    [
        ({"r2": "X"}, {"r3": "Y"}, True),  # adjacent lines
        ({"r2": "X"}, {"r4": "Y"}, False),  # one untouched line between
        ({"i2": "N"}, {"r3": "Y"}, True),  # an insertion at the edge of a change
        ({"i2": "N"}, {"r2": "Y"}, True),
        ({"i2": "N"}, {"r4": "Y"}, False),
        ({"i2": "N"}, {"i2": "M"}, True),  # two insertions at one point
        ({"i2": "N"}, {"i3": "M"}, False),
        ({"d2": ""}, {"d3": ""}, True),
        ({"r2": "X"}, {"r2": "X"}, False),  # identical changes merge cleanly
        ({"i6": "END"}, {"r6": "Y"}, True),  # append at the end vs the last line
    ],
)
def test_changes_meet_where_git_conflicts(a: dict, b: dict, conflict: bool):
    mine, theirs = change(edited(**a)), change(edited(**b))
    found = regions.meeting(BASE, mine, theirs, set(mine))
    assert bool(found) is conflict


def test_an_edit_projects_through_its_old_and_new_strings():
    text = "a\nb\nc\n"
    assert regions.project(text, [("replace", "b", "B")]) == "a\nB\nc\n"
    assert regions.project(text, [("replace", "zzz", "B")]) is None
    assert regions.project("x x\n", [("replace_all", "x", "y")]) == "y y\n"
    assert regions.project(None, [("write", "", "new\n")]) == "new\n"


def test_a_patch_is_read_as_chunks_per_file_and_applied_where_its_old_lines_are():
    body = (
        "*** Begin Patch\n*** Update File: src/a.py\n@@\n a\n-b\n+B\n*** Add File: n.py\n+hi\n"
        "*** Delete File: old.py\n*** End Patch\n"
    )
    edits = regions.patch_edits(body)
    assert edits == {
        "src/a.py": [("chunk", "a\nb", "a\nB")],
        "n.py": [("write", "", "hi\n")],
        "old.py": [("delete", "", "")],
    }
    assert regions.project("x\na\nb  \n", edits["src/a.py"]) == "x\na\nB\n"


def test_changes_on_another_base_are_compared_through_the_content():
    # They started after two lines were added at the top: their line 4 is my line 2.
    theirs_base = "new 1\nnew 2\n" + "".join(line + "\n" for line in BASE)
    theirs_lines = regions.lines_of(theirs_base) or []
    theirs_after = list(theirs_lines)
    theirs_after[3] = "Y"
    row = {
        "base": theirs_base,
        "base_hash": regions.digest(theirs_base),
        "changes": regions.changes_of(theirs_lines, theirs_after),
    }
    mapped = regions._theirs_on_my_base(BASE, regions.digest("mine"), row)
    assert mapped == [(1, 2, "Y\n")]
