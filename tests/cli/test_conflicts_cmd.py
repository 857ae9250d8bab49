"""``colony-tasks conflicts``: whose work overlaps whose, per repository, across branches, and
the files two sessions changed without meeting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from colony_tasks.cli import cli
from colony_tasks.store import open_default
from tests.support.regionwork import edit, meeting_work, overlapping_work


@pytest.fixture
def run(home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(repo)
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return invoke


@pytest.fixture
def work(home: Path, repo: Path, tmp_path: Path):
    store = open_default()
    try:
        yield overlapping_work(store, repo, tmp_path)
    finally:
        store.close()


def test_conflicts_names_both_sides_of_an_overlap_across_branches_and_a_file_changed_apart(
    run, work
):
    a, b = work
    out = run("conflicts").output
    lines = out.splitlines()
    assert lines[0] == "proj: 1 overlapping, 1 same file with no overlap"
    assert lines[1].split() == ["core.py", "overlap:", "git", "will", "conflict"]
    assert f"{a.handle} on main" in lines[2] and "L7-8 (in def retry)" in lines[2]
    assert f"{b.handle} on feature" in lines[3] and "L7-8 (in def retry)" in lines[3]
    assert lines[4].split()[0] == "notes.txt" and "same file, no overlap" in lines[4]
    assert lines[5].split()[3] == "L2" and lines[6].split()[3] == "L28"


def test_conflicts_as_json_gives_each_sides_branch_worktree_and_lines(run, work, tmp_path):
    a, b = work
    [repo] = json.loads(run("conflicts", "--json").output)
    assert repo["repo_name"] == "proj"
    meets = {p["path"]: p["meets"] for p in repo["pairs"]}
    assert meets == {"core.py": True, "notes.txt": False}
    core = repo["pairs"][0]
    sides = {s["handle"]: s for s in core["sides"]}
    assert sides[a.handle]["branch"] == "main" and sides[b.handle]["branch"] == "feature"
    assert sides[b.handle]["root"] == str(tmp_path / "feature")
    assert sides[a.handle]["spans"] == [{"first": 7, "last": 8, "symbol": "def retry"}]


def test_conflicts_follows_the_other_side_moving_away(run, home, repo, tmp_path):
    store = open_default()
    try:
        _, feature, _, _ = meeting_work(store, repo, tmp_path)
        assert json.loads(run("conflicts", "--json").output)[0]["pairs"][0]["meets"]
        # codex takes its change back and changes other() instead: two lines apart now.
        edit(store, "s2", "codex", feature, "core.py", "    step_4 = 44\n", "    step_4 = 4\n")
        edit(store, "s2", "codex", feature, "core.py", "    return 0\n", "    return 1\n")
    finally:
        store.close()
    [pair] = json.loads(run("conflicts", "--json").output)[0]["pairs"]
    assert not pair["meets"]
    assert [s["spans"] for s in pair["sides"]] == [
        [{"first": 7, "last": 7, "symbol": "def retry"}],
        [{"first": 17, "last": 17, "symbol": "def other"}],
    ]


def test_conflicts_says_so_when_nothing_is_shared_and_filters_by_repository(run, work):
    assert json.loads(run("conflicts", "--repo", "elsewhere", "--json").output) == []
    assert "No two live sessions changed the same file" in run("conflicts", "--repo", "x").output
    assert json.loads(run("conflicts", "--repo", "proj", "--json").output)[0]["pairs"]


def test_conflicts_fences_a_branch_name_another_party_chose(run, home, repo, tmp_path):
    store = open_default()
    try:
        meeting_work(store, repo, tmp_path)
        store._run("UPDATE lanes SET branch = ? WHERE branch = 'feature'", ("x\x1b]52;c;ZZ\x07",))
    finally:
        store.close()
    out = run("conflicts").output
    assert "\x1b" not in out and "\x07" not in out and "␛]52;c;ZZ␇" in out
