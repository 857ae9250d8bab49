"""Two sessions changing one repository on two branches, through the core's edit events, for
the tests of what the forecast shows (``colony-tasks conflicts``, the viewer)."""

from __future__ import annotations

from pathlib import Path

from colony_tasks.store import Store
from colony_tasks.usecases import events
from colony_tasks.usecases.events import Event, ToolUse
from tests.support.gitutil import git

CORE = "".join(
    ["import os\n", "\n", "\n", "def retry(n):\n"]
    + [f"    step_{i} = {i}\n" for i in range(1, 9)]
    + ["    return n\n", "\n", "\n", "def other():\n", "    return 0\n"]
)  # retry: L4-13; other: L16-17
NOTES = "".join(f"note {i}\n" for i in range(1, 31))


def two_trees(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The repository on branch main and a linked worktree on branch feature, with core.py
    and notes.txt committed."""
    (repo / "core.py").write_text(CORE)
    (repo / "notes.txt").write_text(NOTES)
    git(repo, "add", "core.py", "notes.txt")
    git(repo, "commit", "-q", "-m", "core")
    other = tmp_path / "feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(other))
    return repo, other


def start(store: Store, tree: Path, sid: str, agent: str):
    return events.session_start(store, Event(sid, agent, str(tree))).session


def edit(store: Store, sid: str, agent: str, tree: Path, rel: str, old: str, new: str):
    """One Edit through PreToolUse, the disk and PostToolUse; the PreToolUse result."""
    path = tree / rel
    tool = ToolUse("Edit", "edit", (str(path),), edits=(("replace", str(path), old, new),))
    before = events.before_tool(store, Event(sid, agent, str(tree)), tool)
    path.write_text(path.read_text().replace(old, new, 1))
    events.after_tool(store, Event(sid, agent, str(tree)), tool)
    return before


def meeting_work(store: Store, repo: Path, tmp_path: Path):
    """claude (s1) on main and codex (s2) on feature, both having changed retry() in core.py
    where they meet (lines 7 and 8). The two trees and the two sessions."""
    main, feature = two_trees(repo, tmp_path)
    a = start(store, main, "s1", "claude")
    b = start(store, feature, "s2", "codex")
    edit(store, "s1", "claude", main, "core.py", "    step_3 = 3\n", "    step_3 = 33\n")
    edit(store, "s2", "codex", feature, "core.py", "    step_4 = 4\n", "    step_4 = 44\n")
    return main, feature, a, b


def overlapping_work(store: Store, repo: Path, tmp_path: Path):
    """:func:`meeting_work`, and both sessions changing notes.txt far apart (lines 2 and 28).
    The two sessions."""
    main, feature, a, b = meeting_work(store, repo, tmp_path)
    edit(store, "s1", "claude", main, "notes.txt", "note 2\n", "note two\n")
    edit(store, "s2", "codex", feature, "notes.txt", "note 28\n", "note twenty-eight\n")
    return a, b
