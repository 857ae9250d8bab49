"""The collision forecast through the use cases (:func:`colony_tasks.usecases.events.before_tool`
and ``after_tool``): an edit hears about another live session's change only where git will
conflict, on any branch of the repository, once; block mode denies only such an edit; a
declared claim still covers its whole file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from colony_tasks.render import briefing
from colony_tasks.store import Store
from colony_tasks.usecases import actions, events
from colony_tasks.usecases.events import Event, ToolUse
from tests.support import regionwork
from tests.support.gitutil import git

pytestmark = pytest.mark.both_backends

LINES = "".join(f"line {i}\n" for i in range(1, 21))


@pytest.fixture
def trees(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The repository on branch main and a linked worktree on branch feature, one file."""
    (repo / "core.py").write_text(LINES)
    git(repo, "add", "core.py")
    git(repo, "commit", "-q", "-m", "core")
    other = tmp_path / "feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(other))
    return repo, other


def edit(store: Store, sid: str, agent: str, tree: Path, old: str, new: str):
    """One Edit of core.py through PreToolUse, the disk, PostToolUse: both results."""
    path = tree / "core.py"
    tool = ToolUse("Edit", "edit", (str(path),), edits=(("replace", str(path), old, new),))
    before = events.before_tool(store, Event(sid, agent, str(tree)), tool)
    path.write_text(path.read_text().replace(old, new, 1))
    after = events.after_tool(store, Event(sid, agent, str(tree)), tool)
    return before, after


def start(store: Store, tree: Path, sid: str, agent: str):
    return events.session_start(store, Event(sid, agent, str(tree))).session


def test_an_edit_that_meets_another_branchs_change_is_warned_once_and_one_apart_is_not(
    store: Store, trees: tuple[Path, Path]
):
    main, feature = trees
    a = start(store, main, "s1", "claude")
    start(store, feature, "s2", "codex")
    edit(store, "s1", "claude", main, "line 5\n", "line five\n")
    # Line 7 with line 6 untouched between: git merges it cleanly, nothing is said.
    apart, after = edit(store, "s2", "codex", feature, "line 7\n", "line seven\n")
    assert apart == events.NOTHING and after.overlaps == ()
    # Line 6 touches line 5: a conflict at merge, named before the edit ...
    touching, after = edit(store, "s2", "codex", feature, "line 6\n", "line six\n")
    [overlap] = touching.overlaps
    assert (overlap.handle, overlap.branch, overlap.path) == (a.handle, "main", "core.py")
    text, deny = briefing.render(store, touching)
    assert deny is None and text is not None and a.handle in text and "core.py L" in text
    assert len(text) <= 140
    # ... and not again after it, nor at the next edit of the same place.
    assert after.overlaps == ()
    again, _ = edit(store, "s2", "codex", feature, "line six\n", "line 6 again\n")
    assert again.overlaps == ()


def test_the_other_session_moving_on_is_told_again(store: Store, trees: tuple[Path, Path]):
    main, feature = trees
    start(store, main, "s1", "claude")
    start(store, feature, "s2", "codex")
    edit(store, "s1", "claude", main, "line 5\n", "line five\n")
    first, _ = edit(store, "s2", "codex", feature, "line 6\n", "line six\n")
    assert len(first.overlaps) == 1
    edit(store, "s1", "claude", main, "line five\n", "line 5, now longer\n")
    told, _ = edit(store, "s2", "codex", feature, "line six\n", "line 6 once more\n")
    assert len(told.overlaps) == 1


def test_block_mode_denies_only_an_edit_that_meets_another_change_across_branches(
    store: Store, trees: tuple[Path, Path], home: Path
):
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"claims": {"mode": "block"}}))
    main, feature = trees
    start(store, main, "s1", "claude")
    start(store, feature, "s2", "codex")
    edit(store, "s1", "claude", main, "line 5\n", "line five\n")
    apart, _ = edit(store, "s2", "codex", feature, "line 12\n", "line twelve\n")
    assert not apart.deny
    denied, _ = edit(store, "s2", "codex", feature, "line 5\n", "line 5 too\n")
    assert denied.deny
    context, reason = briefing.render(store, denied)
    assert context is None and reason is not None and briefing.DENIED in reason


def test_an_explicit_claim_still_warns_on_any_edit_inside_its_file(
    store: Store, trees: tuple[Path, Path]
):
    main, _ = trees
    start(store, main, "s1", "claude")
    holder = start(store, main, "s2", "codex")
    actions.claim(store, holder, ["core.py"], note="refactor")
    before, after = edit(store, "s1", "claude", main, "line 19\n", "line nineteen\n")
    assert before.overlaps == () and [h.handle for c in before.conflicts for h in c.claims] == [
        holder.handle
    ]
    assert [c.path for c in after.conflicts] == ["core.py"]


def test_an_edit_that_only_made_an_automatic_claim_is_not_a_warning(
    store: Store, trees: tuple[Path, Path]
):
    main, _ = trees
    start(store, main, "s1", "claude")
    start(store, main, "s2", "codex")
    edit(store, "s1", "claude", main, "line 2\n", "line two\n")
    before, after = edit(store, "s2", "codex", main, "line 15\n", "line fifteen\n")
    assert before == events.NOTHING and after.conflicts == () and after.overlaps == ()


def test_a_shell_command_that_rewrites_a_file_is_weighed_from_the_disk(
    store: Store, trees: tuple[Path, Path], home: Path
):
    home.mkdir(parents=True, exist_ok=True)
    main, feature = trees
    a = start(store, main, "s1", "claude")
    start(store, feature, "s2", "codex")
    edit(store, "s1", "claude", main, "line 5\n", "line five\n")
    edit(store, "s2", "codex", feature, "line 15\n", "line fifteen\n")  # its base is known
    shell = ToolUse("Bash", "shell", command="sed -i s/6/six/ core.py", use_id="t1")
    events.before_tool(store, Event("s2", "codex", str(feature)), shell)
    path = feature / "core.py"
    path.write_text(path.read_text().replace("line 6\n", "line six\n"))
    os.utime(path, (store.now() + 1, store.now() + 1))  # written while it ran (the test clock)
    after = events.after_tool(store, Event("s2", "codex", str(feature)), shell)
    assert [o.handle for o in after.overlaps] == [a.handle]


def test_the_warning_names_the_function_both_changes_are_in(
    store: Store, repo: Path, tmp_path: Path
):
    main, feature = regionwork.two_trees(repo, tmp_path)
    a = start(store, main, "s1", "claude")
    start(store, feature, "s2", "codex")
    regionwork.edit(store, "s1", "claude", main, "core.py", "    step_3 = 3\n", "    step_3 = 33\n")
    before = regionwork.edit(
        store, "s2", "codex", feature, "core.py", "    step_4 = 4\n", "    step_4 = 44\n"
    )
    text, _ = briefing.render(store, before)
    assert text == (
        f"colony-tasks: core.py L7-8 (in def retry) meets {a.handle}'s change (main):"
        f' git will conflict; ask_question(to="{a.handle}") first.'
    )
    # Where they do not meet, nothing is said, whatever function the edit is in.
    apart = regionwork.edit(
        store, "s2", "codex", feature, "core.py", "    return 0\n", "  return 1\n"
    )
    assert apart == events.NOTHING


def test_a_session_on_a_pulled_base_is_compared_through_the_content(
    store: Store, trees: tuple[Path, Path]
):
    main, feature = trees
    # main moves on (two lines on top) after the feature branch forked; the session on main
    # takes that as its base, the one on feature keeps the old one.
    (main / "core.py").write_text("new 1\nnew 2\n" + LINES)
    git(main, "commit", "-q", "-am", "top")
    a = start(store, main, "s1", "claude")
    start(store, feature, "s2", "codex")
    edit(store, "s1", "claude", main, "line 5\n", "line five\n")  # its base line 7
    # Line 7 is base line 7 of the feature's base too, but two lines below line 5: clean.
    apart, _ = edit(store, "s2", "codex", feature, "line 7\n", "line seven\n")
    assert apart == events.NOTHING
    # Line 4 is four lines above by number, and touches line 5 by content: a conflict.
    touching, _ = edit(store, "s2", "codex", feature, "line 4\n", "line four\n")
    assert [o.handle for o in touching.overlaps] == [a.handle]
    assert (touching.overlaps[0].first, touching.overlaps[0].last) == (4, 5)
