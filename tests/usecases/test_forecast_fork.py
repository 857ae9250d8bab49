"""A session's regions are taken against where its branch forked from the default branch
(:func:`colony_tasks.domain.regions.fork_bases`): what its branch already committed counts
until it is merged, a session on the default branch weighs only what it has not committed,
and two sessions on bases that differ are still compared line for line."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony_tasks.store import Store
from tests.support.gitutil import git
from tests.usecases.test_forecast import edit, start
from tests.usecases.test_forecast import trees as trees  # noqa: F401 - the fixture

pytestmark = pytest.mark.both_backends


def commit_change(tree: Path, old: str, new: str) -> None:
    """A change committed on the tree's branch without any session seeing it."""
    path = tree / "core.py"
    path.write_text(path.read_text().replace(old, new, 1))
    git(tree, "commit", "-q", "-am", "earlier work")


def test_a_change_the_branch_already_committed_is_part_of_its_sessions_region(
    store: Store, trees: tuple[Path, Path]
):
    main, feature = trees
    commit_change(feature, "line 5\n", "line five\n")
    b = start(store, feature, "s2", "codex")
    start(store, main, "s1", "claude")
    edit(store, "s2", "codex", feature, "line 15\n", "line fifteen\n")
    # Line 10 is far from both of feature's changes: nothing is said.
    apart, _ = edit(store, "s1", "claude", main, "line 10\n", "line ten\n")
    assert apart.overlaps == ()
    # Line 6 touches the committed line 5, which the session never edited through a tool.
    touching, _ = edit(store, "s1", "claude", main, "line 6\n", "line six\n")
    [overlap] = touching.overlaps
    assert (overlap.handle, overlap.branch, overlap.first) == (b.handle, "feature", 5)


def test_a_session_on_the_default_branch_weighs_only_what_it_has_not_committed(
    store: Store, trees: tuple[Path, Path]
):
    main, feature = trees
    start(store, main, "s1", "claude")
    start(store, feature, "s2", "codex")
    edit(store, "s1", "claude", main, "line 5\n", "line five\n")
    git(main, "commit", "-q", "-am", "five")  # merged: main is where feature will merge
    edit(store, "s1", "claude", main, "line 15\n", "line fifteen\n")
    row = store.region("s1", "core.py")
    assert row is not None and [(s, e) for s, e, _ in row["changes"]] == [(14, 15)]
    # feature forked before "five": the bases differ, and are compared through their diff.
    apart, _ = edit(store, "s2", "codex", feature, "line 6\n", "line six\n")
    assert apart.overlaps == ()
    touching, _ = edit(store, "s2", "codex", feature, "line 14\n", "line fourteen\n")
    [overlap] = touching.overlaps
    assert (overlap.branch, overlap.first) == ("main", 14)


def test_a_branch_forked_from_origins_default_branch_is_weighed_from_there(
    store: Store, trees: tuple[Path, Path], tmp_path: Path
):
    """``origin/HEAD`` names the branch work merges into, before a local ``main``."""
    main, feature = trees
    git(main, "update-ref", "refs/remotes/origin/trunk", "HEAD")
    git(main, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    commit_change(main, "line 5\n", "line five\n")  # local main moved on; origin did not
    a = start(store, main, "s1", "claude")
    start(store, feature, "s2", "codex")
    edit(store, "s1", "claude", main, "line 15\n", "line fifteen\n")
    touching, _ = edit(store, "s2", "codex", feature, "line 6\n", "line six\n")
    assert [o.handle for o in touching.overlaps] == [a.handle]
