from __future__ import annotations

import os
from pathlib import Path

from colony_tasks.base import lanes
from tests.support.gitutil import git, make_repo


def test_plain_repository_on_a_branch(repo: Path):
    info = lanes.resolve(str(repo))
    assert info.repo_id == os.path.realpath(repo / ".git")
    assert info.root == os.path.realpath(repo)
    assert info.repo_name == "proj"
    assert info.branch == "main"


def test_nested_working_directory_resolves_to_the_repository(repo: Path):
    nested = repo / "src" / "pkg"
    nested.mkdir(parents=True)
    info = lanes.resolve(str(nested))
    assert info.root == os.path.realpath(repo)
    assert info.branch == "main"


def test_linked_worktree_shares_repository_identity_with_its_own_branch(repo: Path, tmp_path: Path):
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
    main = lanes.resolve(str(repo))
    linked = lanes.resolve(str(worktree / "."))
    assert linked.repo_id == main.repo_id
    assert linked.root == os.path.realpath(worktree)
    assert linked.branch == "feature"
    assert linked.repo_name == "proj"


def test_detached_head_names_the_commit(repo: Path):
    sha = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "--detach")
    assert lanes.resolve(str(repo)).branch == f"detached@{sha[:7]}"


def test_unborn_branch_keeps_its_name(tmp_path: Path):
    path = make_repo(tmp_path / "empty", commit=False)
    git(path, "checkout", "-q", "-b", "first")
    info = lanes.resolve(str(path))
    assert info.branch == "first"
    assert info.repo_id == os.path.realpath(path / ".git")


def test_submodule_is_its_own_repository(repo: Path, tmp_path: Path):
    lib = make_repo(tmp_path / "lib")
    git(repo, "submodule", "add", "-q", str(lib), "vendor/lib")
    sub = repo / "vendor" / "lib"
    info = lanes.resolve(str(sub))
    parent = lanes.resolve(str(repo))
    assert info.repo_id != parent.repo_id
    assert info.root == os.path.realpath(sub)
    assert info.repo_name == "lib"
    assert info.branch.startswith("detached@") or info.branch == "main"


def test_non_git_folder_is_its_own_lane_without_branch(tmp_path: Path):
    folder = tmp_path / "plain"
    folder.mkdir()
    info = lanes.resolve(str(folder))
    assert info.repo_id == os.path.realpath(folder)
    assert info.branch == ""
    assert not info.is_git


def test_missing_folder_does_not_raise(tmp_path: Path):
    info = lanes.resolve(str(tmp_path / "gone"))
    assert info.branch == ""


def test_two_clones_of_one_origin_on_one_machine_are_one_repository(repo: Path, tmp_path: Path):
    clones = []
    for name in ("a", "b"):
        git(tmp_path, "clone", "-q", str(repo), str(tmp_path / name))
        git(tmp_path / name, "remote", "set-url", "origin", "git@github.com:org/proj.git")
        clones.append(lanes.resolve(str(tmp_path / name)))
    a, b = clones
    assert a.repo_id == b.repo_id == "git:github.com/org/proj"
    assert a.root != b.root and a.branch == b.branch == "main"
    # A clone of a local path has no shared identity: its own git dir names it.
    git(tmp_path, "clone", "-q", str(repo), str(tmp_path / "c"))
    assert lanes.resolve(str(tmp_path / "c")).repo_id == os.path.realpath(tmp_path / "c" / ".git")
