from __future__ import annotations

import os
from pathlib import Path

import pytest

from colony_tasks.base import globs
from colony_tasks.base.errors import InvalidInput
from colony_tasks.domain import claims, sessions
from colony_tasks.store import Store
from colony_tasks.usecases import actions
from tests.support.gitutil import git
from tests.support.helpers import join

# One set of tests, two stores: SQLite and a real PostgreSQL server (tests/conftest.py).
pytestmark = pytest.mark.both_backends


def holders(conflicts: list[claims.PathConflict]) -> dict[str, list[str]]:
    return {c.path: [h.session_id for h in c.claims] for c in conflicts}


def test_claim_is_granted_beside_the_conflicts(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    join(store, "b", "codex", repo)
    first = actions.claim(store, "a", ["src/api.py"], note="refactor")
    assert [g["pattern"] for g in first.granted] == ["src/api.py"] and first.conflicts == []
    second = actions.claim(store, "b", ["src/api.py"])
    assert [g["holder"] for g in second.granted] == [store.get_session("b").handle]
    assert holders(second.conflicts) == {"src/api.py": ["a"]}
    assert second.conflicts[0].claims[0].note == "refactor"


def test_glob_claims_match_gitignore_style(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo)
    actions.claim(store, "a", ["src/api/**", "*.md"])
    found = claims.conflicts(store, b.session, ["src/api/v1/routes.py", "src/apix.py", "docs/x.md"])
    assert holders(found) == {"src/api/v1/routes.py": ["a"], "docs/x.md": ["a"]}
    assert claims.matches("src/**", "src/api/**") and not claims.matches("lib/**", "src/**")


def test_claims_expire_at_their_ttl_and_renew_by_claiming_again(store: Store, repo: Path, clock):
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo)
    actions.claim(store, "a", ["x.py"], ttl_minutes=10)
    clock.advance(9 * 60)
    store.refresh_session("a")
    actions.claim(store, "a", ["x.py"], ttl_minutes=10)  # renew
    clock.advance(9 * 60)
    assert holders(claims.conflicts(store, b.session, ["x.py"])) == {"x.py": ["a"]}
    clock.advance(2 * 60)
    assert claims.conflicts(store, b.session, ["x.py"]) == []
    assert len(store.list_claims(session_id="a")) == 0
    assert [c["state"] for c in claims.list_live(store)] == ["expired"]


def test_claims_are_released_when_their_session_ends(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo)
    actions.claim(store, "a", ["x.py"])
    assert sessions.end_session(store, store.get_session("a"))["released"] == 1
    assert claims.conflicts(store, b.session, ["x.py"]) == []


def test_quiet_holder_is_reported_stale(store: Store, repo: Path, clock):
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo)
    actions.claim(store, "a", ["x.py"], ttl_minutes=120)
    clock.advance(31 * 60)
    store.refresh_session("b")
    (conflict,) = claims.conflicts(store, b.session, ["x.py"])
    assert conflict.claims[0].stale and conflict.live == []


def test_claim_on_another_branch_is_an_other_lane_notice(store: Store, repo: Path, tmp_path: Path):
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", worktree)
    actions.claim(store, "a", ["src/api.py"])
    (conflict,) = claims.conflicts(store, b.session, ["src/api.py"])
    holder = conflict.claims[0]
    assert holder.other_lane and holder.branch == "main"
    assert conflict.live == []


def test_recent_edits_are_soft_evidence(store: Store, repo: Path, clock):
    a = join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo)
    store.add_observation(
        "edit",
        "edited",
        session_id="a",
        task_id=a.task.id,
        paths=["src/x.py"],
        repo_id=a.lane.repo_id,
    )
    (conflict,) = claims.conflicts(store, b.session, ["src/x.py"])
    assert conflict.claims == [] and [e.session_id for e in conflict.recent_edits] == ["a"]
    clock.advance(31 * 60)
    assert claims.conflicts(store, b.session, ["src/x.py"]) == []


def test_paths_are_normalised_to_repo_relative(store: Store, repo: Path, tmp_path: Path):
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
    (repo / "src").mkdir()
    lane = join(store, "a", "claude", repo / "src").lane
    assert claims.normalize(str(repo / "src" / "a.py"), lane=lane) == "src/a.py"
    assert claims.normalize("./a.py", lane=lane, cwd=str(repo / "src")) == "src/a.py"
    assert claims.normalize("../README.md", lane=lane, cwd=str(repo / "src")) == "README.md"
    assert claims.normalize("src/../src/./b.py", lane=lane) == "src/b.py"
    assert claims.normalize(str(worktree / "src" / "a.py"), lane=lane) == "src/a.py"
    assert claims.normalize("src\\win\\c.py", lane=lane) == "src/win/c.py"


@pytest.mark.parametrize("bad", ["/etc/passwd", "../../x", "", "a\x00b", "x" * 5000, ".git/config"])
def test_paths_outside_the_repository_are_rejected(store: Store, repo: Path, bad: str):
    lane = join(store, "a", "claude", repo).lane
    with pytest.raises(InvalidInput):
        claims.normalize(bad, lane=lane)


def test_symlink_pointing_outside_is_rejected(store: Store, repo: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, repo / "link")
    lane = join(store, "a", "claude", repo).lane
    with pytest.raises(InvalidInput, match="outside the repository"):
        claims.normalize("link/secret.txt", lane=lane)


def test_release_specific_paths_or_all(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    actions.claim(store, "a", ["a.py", "b.py", "c.py"])
    assert [r["pattern"] for r in actions.release(store, "a", ["b.py"])] == ["b.py"]
    assert sorted(r["pattern"] for r in actions.release(store, "a")) == ["a.py", "c.py"]
    assert store.list_claims() == []


@pytest.mark.parametrize(
    "glob,path",
    [
        ("src/api/**", "src/api/v1/x.py"),
        ("*.md", "docs/readme.md"),
        ("docs/**", "docs/a/b.txt"),
        ("src/**/test_*.py", "src/a/b/test_x.py"),
        ("file[0-9].py", "file7.py"),
        ("**/vendor", "a/vendor"),
        ("a?c.txt", "abc.txt"),
    ],
)
def test_prefilter_never_rejects_a_real_match(glob: str, path: str):
    assert claims.matches(glob, path)
    assert globs._may_match(glob, path)


def test_prefilter_skips_globs_that_cannot_match():
    assert not globs._may_match("docs/**", "src/app.py")
    assert not globs._may_match("*.md", "src/app.py")
    assert not claims.matches("src/api/**", "src/app.py")


GLOBS = [
    "src/**",
    "docs/**",
    "*.md",
    "src/*.py",
    "src/**/test_*.py",
    "**/vendor",
    "file[0-9].py",
    "a?c.txt",
    "build/",
    "!keep.py",
    "**/*.ts",
    "src/[ab]*/x.py",
    "\\*literal.py",
]
PATHS = [
    "src/app.py",
    "src/api/v1/x.py",
    "docs/a/b.txt",
    "README.md",
    "docs/readme.md",
    "src/a/b/test_x.py",
    "a/vendor",
    "a/vendor/lib.py",
    "file7.py",
    "abc.txt",
    "build/out.js",
    "keep.py",
    "web/ui/x.ts",
    "src/alpha/x.py",
    "srcx/app.py",
]


@pytest.mark.parametrize("glob", GLOBS)
def test_the_stored_expression_matches_exactly_what_pathspec_matches(glob: str):
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines([glob])
    regex = globs.glob_regex(glob)
    for path in PATHS:
        assert globs.matches(glob, path, regex) == spec.match_file(path), (glob, path)


def test_a_glob_claim_stores_its_expression_and_a_literal_claim_none(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    actions.claim(store, "a", ["src/**", "src/app.py"])
    rows = {c["pattern"]: c["regex"] for c in store.list_claims(session_id="a")}
    assert rows["src/app.py"] is None and rows["src/**"] == globs.glob_regex("src/**")


def test_a_claim_on_a_folder_covers_the_files_inside_it(store: Store, repo: Path):
    (repo / "src" / "api").mkdir(parents=True)
    join(store, "a", "claude", repo)
    join(store, "b", "codex", repo)
    actions.claim(store, "a", ["src/api"])
    found = claims.conflicts(store, store.get_session("b"), ["src/api/v1.py", "src/apiary.py"])
    assert [c.path for c in found] == ["src/api/v1.py"]


def test_a_claim_note_is_held_to_the_message_limit(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    limit = 16_000
    with pytest.raises(InvalidInput, match=f"claim note is {limit + 1} characters"):
        actions.claim(store, "a", ["src/x.py"], note="n" * (limit + 1))
    assert store.list_claims() == []
    assert actions.claim(store, "a", ["src/x.py"], note="n" * limit).granted


@pytest.mark.parametrize(
    "bad", ["src/evil\u202egnp.py", "src/a\u200bb.py", "src/\x1b[31mred.py", "src/\u2066x\u2069.py"]
)
def test_a_path_that_displays_as_another_is_refused(store: Store, repo: Path, bad: str):
    lane = join(store, "a", "claude", repo).lane
    with pytest.raises(InvalidInput, match="bidirectional"):
        claims.normalize(bad, lane=lane)
    assert claims.normalize("src/café-ünï.py", lane=lane) == "src/café-ünï.py"
