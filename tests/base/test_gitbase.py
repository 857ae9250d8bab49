"""Reading a file's base where its branch forked (:mod:`colony_tasks.base.gitbase`) from real
git repositories: the relay's pool keeps one cat-file process per working tree, follows new
commits, starts a new one when its process dies; no git or an unborn ``HEAD`` gives no base."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from colony_tasks.base import gitbase
from tests.support.gitutil import git, make_repo


def text(raw: bytes) -> str:
    return raw.decode()


def base(reader: gitbase.Reader, root: Path, rel: str) -> gitbase.Base | None:
    return reader.bases(str(root), [rel], text).get(rel)


@pytest.fixture
def pool():
    reader = gitbase.Pool()
    yield reader
    reader.close()


def forked(repo: Path, tmp_path: Path) -> Path:
    """A worktree on branch feature with a commit of its own (a.txt changed, added.txt
    added) and an untracked file, main having moved on too."""
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "a")
    feature = tmp_path / "feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(feature))
    (feature / "a.txt").write_text("one on feature\n")
    (feature / "added.txt").write_text("new on feature\n")
    git(feature, "add", "added.txt")
    git(feature, "commit", "-q", "-am", "feature")
    (feature / "untracked.txt").write_text("nobody committed this\n")
    (repo / "a.txt").write_text("one on main\n")
    git(repo, "commit", "-q", "-am", "main")
    return feature


@pytest.mark.parametrize("kind", [gitbase.Pool, gitbase.OneShot])
def test_the_base_is_the_blob_at_the_merge_base_with_the_default_branch(
    repo: Path, tmp_path: Path, kind: type[gitbase.Reader]
):
    feature = forked(repo, tmp_path)
    reader = kind()
    try:
        fork = git(feature, "merge-base", "HEAD", "main")
        assert base(reader, feature, "a.txt") == (gitbase.Base("one\n", fork))
        assert base(reader, feature, "added.txt") == gitbase.Base(None, fork)  # the branch's
        assert base(reader, feature, "untracked.txt") is None  # no base from git
        on_main = base(reader, repo, "a.txt")  # on main itself: HEAD's blob
        assert on_main == gitbase.Base("one on main\n", git(repo, "rev-parse", "HEAD"))
    finally:
        reader.close()


def test_one_process_per_working_tree_is_reused_and_follows_new_commits(
    pool: gitbase.Pool, repo: Path
):
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "a")
    assert base(pool, repo, "a.txt").text == "one\n"  # type: ignore[union-attr]
    (repo / "a.txt").write_text("two\n")
    git(repo, "commit", "-q", "-am", "b")
    assert base(pool, repo, "a.txt").text == "two\n"  # type: ignore[union-attr]
    assert pool.started() == 1


def test_a_dead_process_is_replaced_and_closing_ends_it(pool: gitbase.Pool, repo: Path):
    assert base(pool, repo, "README.md").text == "hello\n"  # type: ignore[union-attr]
    first = pool.processes[str(repo)].proc
    assert first is not None
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    for _ in range(2):  # the question it dies under may find no base; the next one does
        found = base(pool, repo, "README.md")
    assert found is not None and found.text == "hello\n"
    assert pool.started() == 2
    second = pool.processes[str(repo)].proc
    assert second is not None
    pool.close()
    assert second.poll() is not None


def test_no_git_and_an_unborn_head_give_no_base(pool: gitbase.Pool, tmp_path: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.txt").write_text("one\n")
    unborn = make_repo(tmp_path / "unborn", commit=False)
    assert base(pool, plain, "a.txt") is None
    assert base(pool, unborn, "a.txt") is None
    assert base(gitbase.OneShot(), plain, "a.txt") is None


def test_the_relays_pool_keeps_at_most_its_cap_of_trees(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(gitbase, "MAX_TREES", 2)
    pool = gitbase.Pool()
    trees = []
    for name in ("a", "b", "c"):
        tree = tmp_path / name
        tree.mkdir()
        subprocess.run(["git", "init", "-q", str(tree)], check=True)
        trees.append(str(tree))
    try:
        for tree in trees:
            pool.objects(tree, ["HEAD"])
        assert list(pool.processes) == trees[1:]  # the least recently asked one ended
        pool.objects(trees[1], ["HEAD"])
        pool.objects(trees[0], ["HEAD"])
        assert list(pool.processes) == [trees[1], trees[0]]
    finally:
        pool.close()
