"""The opt-in git pre-commit guard, end to end: the installed console script writes the hook,
real `git commit`s run it."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from colony_tasks.domain import sessions
from colony_tasks.store import Store
from colony_tasks.store.base import LATEST
from colony_tasks.usecases import actions
from tests.support.gitutil import GIT_ENV, git
from tests.support.hookrun import EXE


def cli(repo: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV, "COLONY_TASKS_HOME": str(home)}
    return subprocess.run(
        [str(EXE), *args], cwd=repo, env=env, capture_output=True, text=True, timeout=60
    )


def commit(repo: Path, home: Path, name: str, *extra: str) -> subprocess.CompletedProcess:
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / name).write_text(f"change {os.urandom(4).hex()}\n")
    git(repo, "add", name)
    env = {**os.environ, **GIT_ENV, "COLONY_TASKS_HOME": str(home)}
    return subprocess.run(
        ["git", "commit", "-q", "-m", f"touch {name}", *extra],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def hook_of(repo: Path) -> Path:
    return repo / ".git" / "hooks" / "pre-commit"


@pytest.fixture
def guarded(repo: Path, home: Path) -> Path:
    installed = cli(repo, home, "install", "--git-guard")
    assert installed.returncode == 0, installed.stderr
    assert "Installed the git guard" in installed.stdout
    assert os.access(hook_of(repo), os.X_OK)
    return repo


def claimed_by_another(repo: Path, home: Path, path: str) -> str:
    home.mkdir(parents=True, exist_ok=True)
    store = Store(home / "colony.db")
    other = sessions.register(store, "other-agent", agent="codex", cwd=str(repo)).session
    actions.claim(store, other, [path], note="reshaping")
    store.close()
    return other.handle


def test_a_commit_of_a_file_another_session_holds_warns_and_goes_through(guarded, home):
    holder = claimed_by_another(guarded, home, "src/api.py")
    done = commit(guarded, home, "src/api.py")
    assert done.returncode == 0
    assert f"src/api.py — held by {holder}" in done.stderr
    assert "git commit --no-verify" in done.stderr
    assert git(guarded, "log", "-1", "--format=%s") == "touch src/api.py"
    # A file nobody holds: silence.
    quiet = commit(guarded, home, "src/other.py")
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_block_mode_stops_the_commit_and_the_bypass_works(guarded, home):
    holder = claimed_by_another(guarded, home, "src/api.py")
    (home / "settings.json").write_text(json.dumps({"git_guard": {"mode": "block"}}))
    stopped = commit(guarded, home, "src/api.py")
    assert stopped.returncode != 0
    assert holder in stopped.stderr and "The commit was stopped" in stopped.stderr
    assert git(guarded, "log", "-1", "--format=%s") == "init"
    bypass = subprocess.run(
        ["git", "commit", "-q", "--no-verify", "-m", "anyway"],
        cwd=guarded,
        env={**os.environ, **GIT_ENV, "COLONY_TASKS_HOME": str(home)},
        capture_output=True,
        text=True,
    )
    assert bypass.returncode == 0 and git(guarded, "log", "-1", "--format=%s") == "anyway"


def test_the_committing_agents_own_claims_do_not_count(guarded, home):
    home.mkdir(parents=True, exist_ok=True)
    store = Store(home / "colony.db")
    # This test process stands for the agent: the hook's ancestors include it.
    me = sessions.register(
        store, "me-agent", agent="claude", cwd=str(guarded), agent_pid=os.getpid()
    )
    actions.claim(store, me.session, ["src/mine.py"])
    store.close()
    done = commit(guarded, home, "src/mine.py")
    assert done.returncode == 0 and done.stderr == ""


def test_a_repository_without_a_lane_or_a_store_is_left_alone(guarded, home, tmp_path):
    # No store at all: nothing is created, nothing said.
    done = commit(guarded, home, "a.py")
    assert done.returncode == 0 and done.stderr == "" and not (home / "colony.db").exists()
    # A store whose lanes are all elsewhere: the guard creates no lane here.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    home.mkdir(parents=True, exist_ok=True)
    store = Store(home / "colony.db")
    sessions.register(store, "far", agent="codex", cwd=str(elsewhere))
    lanes_before = store._all("SELECT id FROM lanes")
    store.close()
    again = commit(guarded, home, "b.py")
    assert again.returncode == 0 and again.stderr == ""
    store = Store(home / "colony.db")
    assert store._all("SELECT id FROM lanes") == lanes_before


def test_an_unreachable_store_lets_the_commit_through(guarded, home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "colony.db").write_bytes(b"this is not a database" * 100)
    done = commit(guarded, home, "src/api.py")
    assert done.returncode == 0
    assert "colony-tasks guard: skipped" in done.stderr


def test_an_existing_pre_commit_hook_is_never_overwritten(repo, home):
    hook = hook_of(repo)
    hook.write_text("#!/bin/sh\necho mine\n")
    hook.chmod(0o755)
    result = cli(repo, home, "install", "--git-guard")
    assert result.returncode == 0 and "Left the existing pre-commit hook alone" in result.stdout
    assert f"{EXE} guard pre-commit" in result.stdout  # the line to add
    assert hook.read_text() == "#!/bin/sh\necho mine\n"
    removed = cli(repo, home, "uninstall", "--git-guard")
    assert "nothing to remove" in removed.stdout and hook.exists()


def test_the_pre_commit_framework_gets_a_config_snippet_instead(repo, home):
    hook = hook_of(repo)
    hook.write_text("#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n")
    result = cli(repo, home, "install", "--git-guard")
    assert ".pre-commit-config.yaml" in result.stdout and "repo: local" in result.stdout
    assert "colony-tasks" not in hook.read_text()


def test_a_hooks_path_inside_the_work_tree_is_not_written(repo, home):
    git(repo, "config", "core.hooksPath", ".husky")
    result = cli(repo, home, "install", "--git-guard")
    assert result.returncode == 0 and "Left the existing pre-commit hook alone" in result.stdout
    assert not (repo / ".husky").exists()


def test_a_shared_hooks_path_is_not_written_either(repo, home, tmp_path):
    shared = tmp_path / "shared-hooks"
    git(repo, "config", "core.hooksPath", str(shared))
    result = cli(repo, home, "install", "--git-guard")
    assert "Left the existing pre-commit hook alone" in result.stdout
    assert f"{EXE} guard pre-commit" in result.stdout
    assert not (shared / "pre-commit").exists() and not hook_of(repo).exists()


def test_uninstall_removes_only_our_guard_and_reinstall_is_idempotent(guarded, home):
    again = cli(guarded, home, "install", "--git-guard")
    assert "already installed" in again.stdout
    removed = cli(guarded, home, "uninstall", "--git-guard")
    assert removed.returncode == 0 and "Removed the git guard" in removed.stdout
    assert not hook_of(guarded).exists()
    assert git(guarded, "status", "--porcelain") == ""  # nothing in the work tree


# -- block mode fails closed -----------------------------------------------------------------
#
# With git_guard.mode = block the guard stops every commit it cannot check, with one line that
# says what is wrong and how to get past (fix it, or `git commit --no-verify`); warn mode lets
# the same commits through, as it always did.


def real_store(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    Store(home / "colony.db").close()
    return home / "colony.db"


def no_store(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home.mkdir(parents=True, exist_ok=True)


def not_a_database(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "colony.db").write_bytes(b"this is not a database" * 100)


def empty_file(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "colony.db").write_bytes(b"")


def truncated(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = real_store(home)
    store = Store(db)
    for i in range(300):
        sessions.register(store, f"s{i}", agent="codex", cwd=str(home))
    store.close()
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])


def a_folder_in_its_place(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (home / "colony.db").mkdir(parents=True)


def unreadable(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads a file whatever its mode (a folder in its place covers it)")
    real_store(home).chmod(0)


def another_applications_database(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(home / "colony.db")
    db.execute("CREATE TABLE sessions (name TEXT)")  # a table of ours by name, not by shape
    db.commit()
    db.close()


def schema_claimed_but_missing(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(home / "colony.db")
    db.execute(f"PRAGMA user_version = {LATEST}")
    db.close()


def newer_schema(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = real_store(home)
    raw = sqlite3.connect(db)
    raw.execute(f"PRAGMA user_version = {LATEST + 1}")
    raw.close()


def team_store_unreachable(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("COLONY_TASKS_DATABASE_URL", "postgresql://colony@127.0.0.1:9/colony")


BROKEN_STORES = {
    "no store": (no_store, "no store at"),
    "not a database": (not_a_database, "file is not a database"),
    "an empty file": (empty_file, "not a colony-tasks store"),
    "truncated": (truncated, "malformed"),
    "a folder in its place": (a_folder_in_its_place, "cannot be read"),
    "unreadable": (unreadable, "cannot be read"),
    "another application's database": (another_applications_database, "not a colony-tasks"),
    "schema claimed, tables missing": (schema_claimed_but_missing, "no such table"),
    "a newer schema": (newer_schema, "newer colony-tasks"),
    "team store unreachable": (team_store_unreachable, "team store"),
}


def set_block(home: Path) -> None:
    settings = home / "settings.json"
    current = json.loads(settings.read_text()) if settings.exists() else {}
    settings.write_text(json.dumps({**current, "git_guard": {"mode": "block"}}))


def stopped_with_one_line(done: subprocess.CompletedProcess, repo: Path, *words: str) -> None:
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("colony-tasks guard: the commit was stopped:")
    assert "git commit --no-verify" in lines[0]
    for word in words:
        assert word in lines[0]
    assert git(repo, "log", "-1", "--format=%s") == "init"


@pytest.mark.parametrize("broken", list(BROKEN_STORES))
def test_block_mode_stops_a_commit_when_the_store_is_broken(guarded, home, broken, monkeypatch):
    make, reason = BROKEN_STORES[broken]
    make(home, monkeypatch)
    set_block(home)
    stopped_with_one_line(commit(guarded, home, "src/api.py"), guarded, reason)


@pytest.mark.parametrize("broken", list(BROKEN_STORES))
def test_warn_mode_lets_the_same_commits_through(guarded, home, broken, monkeypatch):
    make, _ = BROKEN_STORES[broken]
    make(home, monkeypatch)
    done = commit(guarded, home, "src/api.py")
    assert done.returncode == 0, done.stderr
    assert done.stderr in ("",) or done.stderr.startswith("colony-tasks guard: skipped (")


def test_block_mode_stops_a_commit_when_the_store_is_locked(guarded, home):
    db = real_store(home)
    set_block(home)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")  # another process holds it: no one else may even read
    try:
        done = commit(guarded, home, "src/api.py")
    finally:
        holder.close()
    stopped_with_one_line(done, guarded, "database is locked")


@pytest.mark.parametrize("text", ["{not json", '["git_guard", "block"]', ""])
def test_a_settings_file_that_is_not_a_json_object_stops_the_commit(guarded, home, text):
    """The mode cannot be read, so block mode cannot be ruled out: fail closed, and say so."""
    real_store(home)
    (home / "settings.json").write_text(text)
    stopped_with_one_line(commit(guarded, home, "src/api.py"), guarded, "settings.json")


def test_block_mode_with_a_sound_store_and_nothing_held_is_silent(guarded, home):
    real_store(home)
    set_block(home)
    done = commit(guarded, home, "src/api.py")
    assert done.returncode == 0 and done.stderr == ""
