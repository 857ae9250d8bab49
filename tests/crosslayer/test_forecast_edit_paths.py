"""The collision forecast through every edit path of each agent, from the hook payload (the
hook client's parsing, then the relay's application): Claude Code's Edit, MultiEdit, Write and
NotebookEdit, Codex's apply_patch (update, add, delete), and a shell command of either. In
each case another session on another branch changed line 5 of ``core.py``; an edit that meets
it as git will (touching it) names that session, one with an untouched line between is
silent."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from colony_tasks.store import Store
from tests.support.gitutil import git
from tests.support.hookrun import apply_payload, claude, codex

pytestmark = pytest.mark.both_backends

LINES = "".join(f"line {i}\n" for i in range(1, 21))
NOTEBOOK = json.dumps({"cells": [{"source": [f"cell {i}\n"]} for i in range(8)]}, indent=1) + "\n"


def run(
    store: Store,
    make: Callable[..., dict[str, Any]],
    sid: str,
    cwd: Path,
    tool: str,
    tool_input: dict[str, Any],
    change: Callable[[], object],
) -> tuple[str, str]:
    """One tool call through PreToolUse, the change on disk, PostToolUse: what each said."""
    agent = "codex" if make is codex else "claude"
    use = {"tool_use_id": f"use-{sid}-{tool}-{len(json.dumps(tool_input))}-{store.now()}"}
    pre = make("pre-tool-use", sid, cwd, tool_name=tool, tool_input=tool_input, **use)
    before = apply_payload(store, "pre-tool-use", pre, agent)
    change()
    later = store.now() + 1  # written while the tool ran (the test clock)
    for path in cwd.iterdir():
        if path.is_file():
            os.utime(path, (later, later))
    post = make("post-tool-use", sid, cwd, tool_name=tool, tool_input=tool_input, **use)
    post["tool_response"] = {"success": True}
    after = apply_payload(store, "post-tool-use", post, agent)
    return before.get("context") or "", after.get("context") or ""


def replace(path: Path, old: str, new: str) -> Callable[[], None]:
    return lambda: path.write_text(path.read_text().replace(old, new, 1))


def edit_input(path: Path, old: str, new: str) -> dict[str, Any]:
    return {"file_path": str(path), "old_string": old, "new_string": new}


def multi_input(path: Path, *pairs: tuple[str, str]) -> dict[str, Any]:
    edits = [{"old_string": old, "new_string": new} for old, new in pairs]
    return {"file_path": str(path), "edits": edits}


def write_input(path: Path, *pairs: tuple[str, str]) -> dict[str, Any]:
    text = path.read_text()
    for old, new in pairs:
        text = text.replace(old, new, 1)
    return {"file_path": str(path), "content": text}


def written(path: Path, tool_input: dict[str, Any]) -> Callable[[], None]:
    """What a Claude Code edit tool writes to ``path``."""
    if "content" in tool_input:
        return lambda: path.write_text(tool_input["content"])

    def change() -> None:
        text = path.read_text()
        for item in tool_input.get("edits") or [tool_input]:
            text = text.replace(item["old_string"], item["new_string"], 1)
        path.write_text(text)

    return change


def patch(header: str, *lines: str) -> dict[str, Any]:
    body = "\n".join(lines)
    return {"command": f"*** Begin Patch\n*** {header}\n{body}\n*** End Patch\n"}


@pytest.fixture
def trees(repo: Path, tmp_path: Path, home: Path, store: Store) -> tuple[Path, Path, str]:
    """The repository on main, where the other session changed line 5 of core.py and cell 2
    of a notebook, and a worktree on branch feature; the other session's handle."""
    (repo / "core.py").write_text(LINES)
    (repo / "nb.ipynb").write_text(NOTEBOOK)
    git(repo, "add", "core.py", "nb.ipynb")
    git(repo, "commit", "-q", "-m", "core")
    feature = tmp_path / "feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(feature))
    apply_payload(store, "session-start", claude("session-start", "other", repo), "claude")
    apply_payload(store, "session-start", claude("session-start", "mine", feature), "claude")
    apply_payload(store, "session-start", codex("session-start", "cx", feature), "codex")
    for name, old, new in (("core.py", "line 5\n", "line five\n"), ("nb.ipynb", "cell 2", "two")):
        tool_input = edit_input(repo / name, old, new)
        run(store, claude, "other", repo, "Edit", tool_input, replace(repo / name, old, new))
    other = store.get_session("other")
    assert other is not None
    return repo, feature, other.handle


# Each tool: an edit with an untouched line between it and line 5 (silent), then one touching it.
CLAUDE_EDITS = {
    "Edit": (
        lambda p: edit_input(p, "line 7\n", "line seven\n"),
        lambda p: edit_input(p, "line 6\n", "line six\n"),
    ),
    "MultiEdit": (
        lambda p: multi_input(p, ("line 12\n", "L12\n"), ("line 3\n", "L3\n")),
        lambda p: multi_input(p, ("line 16\n", "L16\n"), ("line 4\n", "L4\n")),
    ),
    "Write": (
        lambda p: write_input(p, ("line 3\n", "L3\n"), ("line 20\n", "line 20\ntail\n")),
        lambda p: write_input(p, ("line 4\n", "line four\n")),
    ),
}


@pytest.mark.parametrize("tool", sorted(CLAUDE_EDITS))
def test_claude_code_edit_tools(store: Store, trees: tuple[Path, Path, str], tool: str):
    _, feature, other = trees
    core = feature / "core.py"
    for make_input, meets in zip(CLAUDE_EDITS[tool], (False, True), strict=True):
        tool_input = make_input(core)
        before, after = run(
            store, claude, "mine", feature, tool, tool_input, written(core, tool_input)
        )
        assert (other in before) is meets, (tool, before)
        assert other not in after  # told before the edit, not again after it


def test_claude_code_notebook_edit_is_weighed_as_the_whole_notebook_before_it(
    store: Store, trees: tuple[Path, Path, str]
):
    _, feature, other = trees
    nb, lone = feature / "nb.ipynb", feature / "lone.ipynb"
    lone.write_text(NOTEBOOK)
    # A notebook nobody else changed: nothing to say.
    tool_input = {"notebook_path": str(lone), "cell_id": "c1", "new_source": "x"}
    before, after = run(
        store, claude, "mine", feature, "NotebookEdit", tool_input, replace(lone, "cell 1", "x")
    )
    assert other not in before and other not in after
    # One the other session changed: the cell's place is not in the input, so it warns.
    tool_input = {"notebook_path": str(nb), "cell_id": "c6", "new_source": "six"}
    before, _ = run(
        store, claude, "mine", feature, "NotebookEdit", tool_input, replace(nb, "cell 6", "six")
    )
    assert other in before


def test_codex_apply_patch_update_add_and_delete(store: Store, trees: tuple[Path, Path, str]):
    main, feature, other = trees
    core = feature / "core.py"
    apart = patch("Update File: core.py", "@@", " line 9", "-line 10", "+line ten")
    before, _ = run(
        store, codex, "cx", feature, "apply_patch", apart, replace(core, "line 10\n", "ten\n")
    )
    assert other not in before
    meets = patch("Update File: core.py", "@@", " line 5", "-line 6", "+line six")
    before, after = run(
        store, codex, "cx", feature, "apply_patch", meets, replace(core, "line 6\n", "six\n")
    )
    assert other in before and other not in after
    # Both add one new file with different content: git's add/add conflict.
    added = main / "new.py"
    run(
        store,
        claude,
        "other",
        main,
        "Write",
        {"file_path": str(added), "content": "a = 1\n"},
        lambda: added.write_text("a = 1\n"),
    )
    add = patch("Add File: new.py", "+b = 2")
    before, _ = run(
        store,
        codex,
        "cx",
        feature,
        "apply_patch",
        add,
        lambda: (feature / "new.py").write_text("b = 2\n"),
    )
    assert other in before
    # Deleting a file the other session changed: git's modify/delete conflict.
    gone = patch("Delete File: nb.ipynb")
    before, _ = run(store, codex, "cx", feature, "apply_patch", gone, (feature / "nb.ipynb").unlink)
    assert other in before


SHELLS = [("claude", "Bash"), ("codex", "exec_command")]


def agent_of(agent: str) -> tuple[Callable[..., dict[str, Any]], str]:
    return (codex, "cx") if agent == "codex" else (claude, "mine")


@pytest.mark.parametrize(("agent", "tool"), SHELLS)
def test_a_shell_edit_of_either_agent_is_weighed_by_the_lines_it_changed(
    store: Store, trees: tuple[Path, Path, str], agent: str, tool: str
):
    _, feature, other = trees
    core = feature / "core.py"
    make, sid = agent_of(agent)
    # The session's base of core.py is known: an edit tool changed it first.
    if agent == "codex":
        first = patch("Update File: core.py", "@@", "-line 15", "+line fifteen")
        run(store, codex, sid, feature, "apply_patch", first, replace(core, "line 15", "fifteen"))
    else:
        first = edit_input(core, "line 15\n", "line fifteen\n")
        run(store, claude, sid, feature, "Edit", first, written(core, first))
    apart = {"command": "sed -i 's/^line 9$/nine/' core.py"}
    _, after = run(store, make, sid, feature, tool, apart, replace(core, "line 9\n", "nine\n"))
    assert other not in after
    meets = {"command": "sed -i 's/^line 6$/six/' core.py"}
    _, after = run(store, make, sid, feature, tool, meets, replace(core, "line 6\n", "six\n"))
    assert other in after


@pytest.mark.parametrize(("agent", "tool"), SHELLS)
def test_a_file_a_shell_command_changes_first_is_weighed_by_its_lines_against_the_fork_point(
    store: Store, trees: tuple[Path, Path, str], agent: str, tool: str
):
    _, feature, other = trees
    core = feature / "core.py"
    make, sid = agent_of(agent)
    far = {"command": "sed -i 's/^line 18$/eighteen/' core.py"}
    _, after = run(store, make, sid, feature, tool, far, replace(core, "line 18\n", "18\n"))
    assert other not in after  # its base is the file where feature forked: line 18 is apart
    meets = {"command": "sed -i 's/^line 4$/four/' core.py"}
    _, after = run(store, make, sid, feature, tool, meets, replace(core, "line 4\n", "four\n"))
    assert other in after


@pytest.mark.parametrize(("agent", "tool"), SHELLS)
def test_without_git_a_file_a_shell_command_changes_first_stands_for_the_whole_file(
    store: Store, tmp_path: Path, home: Path, agent: str, tool: str
):
    plain = tmp_path / "plain"
    plain.mkdir()
    core = plain / "core.py"
    core.write_text(LINES)
    apply_payload(store, "session-start", claude("session-start", "other", plain), "claude")
    make, sid = agent_of(agent)
    apply_payload(store, "session-start", make("session-start", sid, plain), agent)
    first = edit_input(core, "line 5\n", "line five\n")
    run(store, claude, "other", plain, "Edit", first, replace(core, "line 5\n", "line five\n"))
    handle = store.get_session("other").handle  # type: ignore[union-attr]
    far = {"command": "sed -i 's/^line 18$/eighteen/' core.py"}
    _, after = run(store, make, sid, plain, tool, far, replace(core, "line 18\n", "18\n"))
    assert handle in after  # its base was never seen: where it changed is unknown
