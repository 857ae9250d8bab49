from __future__ import annotations

from pathlib import Path

import pytest

from colony_tasks.base.errors import InvalidInput, NotFound
from colony_tasks.domain import sessions, tasks
from colony_tasks.store import Store
from tests.support.gitutil import git

# One set of tests, two stores: SQLite and a real PostgreSQL server (tests/conftest.py).
pytestmark = pytest.mark.both_backends


def test_sessions_in_one_lane_share_its_task(store: Store, repo: Path):
    a = sessions.register(store, "sess-a", agent="claude", cwd=str(repo))
    b = sessions.register(store, "sess-b", agent="codex", cwd=str(repo / "."))
    assert a.task.id == b.task.id
    assert a.task.title == "proj@main"
    assert a.session.handle.startswith("claude-") and b.session.handle.startswith("codex-")
    assert [p.id for p in store.participants(a.task.id)] == ["sess-a", "sess-b"]


def test_register_is_idempotent_and_reopens_an_ended_session(store: Store, repo: Path, clock):
    first = sessions.register(store, "sess-a", agent="claude", cwd=str(repo))
    sessions.end_session(store, store.get_session("sess-a"))
    clock.advance(60)
    again = sessions.register(store, "sess-a", agent="claude", cwd=str(repo))
    assert not again.new_session and not again.new_participant
    assert again.session.handle == first.session.handle
    assert again.session.ended_at is None
    assert again.session.last_seen_at == first.session.last_seen_at + 60
    assert store.counts()["tasks"] == 1


def test_branches_are_separate_lanes(store: Store, repo: Path, tmp_path: Path):
    git(repo, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt"))
    a = sessions.register(store, "a", agent="claude", cwd=str(repo))
    b = sessions.register(store, "b", agent="claude", cwd=str(tmp_path / "wt"))
    assert a.lane.repo_id == b.lane.repo_id
    assert a.task.id != b.task.id
    assert b.task.title == "proj@feature"


def test_handle_grows_when_the_short_one_is_taken(store: Store, repo: Path):
    taken = sessions.make_handle(store, "claude", "other")
    store.insert_session("squatter", taken, "claude", "", None, None)
    handle = sessions.make_handle(store, "claude", "other")
    assert handle != taken and handle.startswith(taken)


def test_explicit_task_and_join(store: Store, repo: Path):
    joined = sessions.register(store, "a", agent="claude", cwd=str(repo))
    task = tasks.create_task(store, "Port the viewer", created_by="a")
    assert task.lane_id is None and task.mode == "task"
    assert tasks.join(store, "a", task.id) is False
    sessions.register(store, "b", agent="codex", cwd=str(repo))
    assert tasks.join(store, "b", task.id) is True
    assert {t.id for t in store.tasks_of_session("b")} == {joined.task.id, task.id}


def test_errors_name_the_object_and_carry_the_next_step_for_the_front_end(store: Store):
    with pytest.raises(NotFound, match="^Task 99 does not exist.$") as missing:
        tasks.get_task(store, 99)
    assert missing.value.step == "list_tasks"
    with pytest.raises(InvalidInput):
        tasks.create_task(store, "  ")
    with pytest.raises(InvalidInput):
        sessions.register(store, "", agent="claude", cwd="/")
    with pytest.raises(NotFound, match="nobody") as unknown:
        sessions.find_session(store, "nobody")
    assert unknown.value.step == "list_sessions"


def test_a_session_id_is_capped_and_printable(store, repo):
    for bad in ("x" * (sessions.MAX_SESSION_ID + 1), "abc\x1b[2Jdef", "a\u202eb"):
        with pytest.raises(InvalidInput):
            sessions.register(store, bad, agent="claude", cwd=str(repo))
        assert store.get_session(bad) is None
    ok = "y" * sessions.MAX_SESSION_ID
    assert sessions.register(store, ok, agent="claude", cwd=str(repo)).session.id == ok


def test_a_local_stores_lane_under_the_old_identity_is_adopted(repo: Path, tmp_path: Path):
    """A local store named a repository by its git common dir until identities followed
    ``origin`` (as it still names one without a remote): the next session start on a branch
    re-keys that branch's lane, so its thread goes on; another branch's lane waits its turn."""
    git(repo, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt"))
    local = Store(tmp_path / "colony.db")
    old = sessions.register(local, "old", agent="claude", cwd=str(repo))
    other = sessions.register(local, "other", agent="codex", cwd=str(tmp_path / "wt"))
    assert old.lane.repo_id == str((repo / ".git").resolve())
    git(repo, "remote", "add", "origin", "git@github.com:org/proj.git")

    new = sessions.register(local, "new", agent="codex", cwd=str(repo))

    assert new.lane.repo_id == "git:github.com/org/proj"
    assert (new.lane.id, new.task.id) == (old.lane.id, old.task.id)
    assert [p.id for p in local.participants(new.task.id)] == ["old", "new"]
    assert local.get_lane(other.lane.id).repo_id == old.lane.repo_id
    assert local.counts()["tasks"] == 2
    local.close()
