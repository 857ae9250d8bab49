"""Hooks fail open: exit 0, nothing on stdout, one line in the log."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from colony_tasks.base import paths
from colony_tasks.hooks import payload as payload_mod
from colony_tasks.hooks import runner, transport
from colony_tasks.install import doctor
from colony_tasks.relay import apply as apply_mod
from colony_tasks.usecases import events, records
from tests.support.hookrun import claude, relay_status, run_hook

EVENTS = list(payload_mod.EVENT_NAMES)


def log_lines(home: Path) -> list[str]:
    path = home / "hooks.log"
    return path.read_text().splitlines() if path.exists() else []


BAD_INPUTS = {
    "empty": b"",
    "whitespace": b"   \n",
    "not json": b"garbage {",
    "json array": b"[1, 2, 3]",
    "json string": b'"hello"',
    "binary": bytes(range(256)),
    "truncated": b'{"session_id": "s1", "cwd": ',
}


@pytest.mark.parametrize("name", list(BAD_INPUTS))
@pytest.mark.parametrize("event", ["session-start", "user-prompt-submit", "post-tool-use"])
def test_malformed_stdin_exits_0_silently_and_logs(home: Path, event: str, name: str):
    result = run_hook(event, None, home, raw=BAD_INPUTS[name])
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert len(log_lines(home)) == 1 and f"hook {event} failed" in log_lines(home)[0]


def test_unknown_event_exits_0_and_logs(home: Path, repo: Path):
    result = run_hook("pre-compact", claude("stop", "s", repo), home)
    assert (result.returncode, result.stdout) == (0, "")
    assert "unknown hook event 'pre-compact'" in log_lines(home)[0]


WRONG_TYPES = [
    {"session_id": 5, "cwd": "/tmp"},
    {"session_id": "s", "cwd": ["a"]},
    {"session_id": None},
    {"session_id": "s", "cwd": "/tmp", "tool_name": 7, "tool_input": "oops"},
    {"session_id": "s", "cwd": "/tmp", "tool_name": "Edit", "tool_input": {"file_path": 12}},
    {
        "session_id": "s",
        "cwd": "/tmp",
        "tool_name": "apply_patch",
        "tool_input": {"command": {"x": 1}},
    },
    {"session_id": "s", "cwd": "/tmp", "prompt": {"nested": True}},
]


@pytest.mark.parametrize("event", EVENTS)
def test_wrong_field_types_never_break_a_hook(home: Path, event: str):
    for payload in WRONG_TYPES:
        result = run_hook(event, payload, home)
        assert (result.returncode, result.stderr) == (0, "")
        assert result.stdout == "" or json.loads(result.stdout)


def test_five_megabyte_payload_is_logged_and_its_prompt_recorded_capped(home: Path, repo: Path):
    payload = claude("user-prompt-submit", "big", repo, prompt="x" * (5 * 1024 * 1024))
    result = run_hook("user-prompt-submit", payload, home)
    assert (result.returncode, result.stdout) == (0, "")
    assert any("large payload" in line for line in log_lines(home))
    db = sqlite3.connect(home / "colony.db")
    (length,) = db.execute("SELECT length(text) FROM observations WHERE kind = 'prompt'").fetchone()
    db.close()
    assert 0 < length <= records.PROMPT_CHARS + 1  # capped, not 5 MB


def test_unwritable_home_exits_0_and_logs_to_the_fallback(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    home = Path("/proc/colony-tasks-cannot-exist")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("COLONY_TASKS_HOME", str(home))
    fallback = Path(paths.fallback_log_path())
    result = run_hook("session-start", claude("session-start", "s", repo), home)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert "hook session-start failed" in fallback.read_text()
    assert fallback.stat().st_mode & 0o777 == 0o600
    assert fallback.parent.stat().st_mode & 0o777 == 0o700


def _fail_to_log(monkeypatch: pytest.MonkeyPatch, home: Path, message: str) -> Path:
    """Log with ``home`` unwritable (a file stands where its folder should be)."""
    home.parent.mkdir(parents=True, exist_ok=True)
    home.write_text("not a folder")
    monkeypatch.setenv("COLONY_TASKS_HOME", str(home))
    paths.log(message)
    return Path(paths.fallback_log_path())


def test_the_fallback_log_is_private_to_its_store(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    first = _fail_to_log(monkeypatch, tmp_path / "a" / "home", "hook x failed: store a")
    second = _fail_to_log(monkeypatch, tmp_path / "b" / "home", "hook x failed: store b")
    assert first != second and first.parent == second.parent
    assert "store a" in first.read_text() and "store a" not in second.read_text()
    healthy = tmp_path / "c" / "home"
    monkeypatch.setenv("COLONY_TASKS_HOME", str(healthy))
    assert doctor.hook_log_errors(0) == []  # another store's failures are not this one's


def test_the_fallback_log_never_follows_or_reuses_what_someone_else_prepared(
    tmp_path: Path, monkeypatch
):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    home = tmp_path / "h" / "home"
    monkeypatch.setenv("COLONY_TASKS_HOME", str(home))
    target = Path(paths.fallback_log_path())
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    folder = target.parent
    folder.mkdir(mode=0o700)
    for prepare in (
        lambda: target.symlink_to(victim),  # a symlink to another file
        lambda: os.link(victim, target),  # a hard link to it
        lambda: (target.write_text("planted\n"), target.chmod(0o644)),  # readable by others
    ):
        prepare()
        _fail_to_log(monkeypatch, home, "hook x failed: secret detail")
        assert victim.read_text() == "precious\n"
        assert "secret detail" not in target.read_text()
        target.unlink()
    folder.chmod(0o755)  # a folder others can read is not used either
    _fail_to_log(monkeypatch, home, "hook x failed: secret detail")
    assert not target.exists()


def test_a_bug_in_a_use_case_is_logged_not_raised(home: Path, monkeypatch, capsys, repo: Path):
    def broken(store, event, text):
        raise ZeroDivisionError("a bug")

    monkeypatch.setenv("COLONY_TASKS_RELAY", "off")  # applied in this process, patch and all
    monkeypatch.setattr(events, "prompt", broken)
    payload = json.dumps(claude("user-prompt-submit", "s", repo, prompt="hi")).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(payload)))
    assert runner.run(["user-prompt-submit"]) == 0
    assert capsys.readouterr().out == ""
    assert "ZeroDivisionError: a bug" in log_lines(home)[0]


@pytest.mark.slow
def test_database_locked_past_the_busy_timeout_exits_0_and_logs(home: Path, repo: Path):
    run_hook("session-start", claude("session-start", "s", repo), home)
    locker = sqlite3.connect(home / "colony.db", isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        result = run_hook(
            "user-prompt-submit", claude("user-prompt-submit", "s", repo, prompt="hi"), home
        )
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    # It gave up on the lock (a timeout, logged) rather than hanging until the deadline alarm.
    assert (result.returncode, result.stdout) == (0, "")
    assert any("locked" in line for line in log_lines(home))
    assert not any("exceeded" in line for line in log_lines(home))


def test_session_end_on_a_locked_store_returns_within_its_budget_and_ends_the_session_later(
    home: Path, repo: Path
):
    run_hook("session-start", claude("session-start", "s", repo), home)
    relay_status(home)  # the first hook started it
    locker = sqlite3.connect(home / "colony.db", isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        result = run_hook("session-end", claude("session-end", "s", repo), home)
        db = sqlite3.connect(home / "colony.db", timeout=0)
        # The hook gave up waiting (on its relay, then on the store) and failed open ...
        assert (result.returncode, result.stdout) == (0, "")
        assert any("hook session-end failed" in line for line in log_lines(home))
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    # ... while its relay still holds the event and applies it once the lock is gone.
    deadline = time.monotonic() + 10
    ended = None
    while ended is None and time.monotonic() < deadline:
        (ended,) = db.execute("SELECT ended_at FROM sessions WHERE id = 's'").fetchone()
    db.close()
    assert ended is not None


def test_session_end_waits_on_the_store_less_than_its_smallest_budget(
    home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    # Codex gives SessionEnd 1 s in all, Claude's plugin hooks 1.5 s: a hook still waiting
    # then is killed before it can log.
    opened: list[dict] = []
    real = apply_mod.open_local

    def spy(**kwargs):
        opened.append(kwargs)
        return real(**kwargs)

    monkeypatch.setenv("COLONY_TASKS_RELAY", "off")
    monkeypatch.setattr(apply_mod, "open_local", spy)
    runner.handle(
        "session-end", "codex", json.dumps({"session_id": "s", "cwd": str(repo)}).encode()
    )
    runner.handle("stop", "codex", json.dumps({"session_id": "s", "cwd": str(repo)}).encode())
    assert opened == [{"busy_timeout_ms": transport.SESSION_END_BUSY_MS}, {}]
    assert transport.SESSION_END_BUSY_MS / 1000 < transport.SESSION_END_DEADLINE_SECONDS
    # Waiting on the relay and then on the store still fits Codex's 1 s.
    assert transport.SESSION_END_RELAY_WAIT + transport.SESSION_END_DEADLINE_SECONDS < 1


def test_the_same_hook_installed_at_two_scopes_acts_once(home: Path, repo: Path):
    """User and project scope both installed: the agent runs each hook twice with the same
    input. The prompt is recorded once and its context injected once."""
    run_hook("session-start", claude("session-start", "s", repo), home)
    prompt = claude("user-prompt-submit", "s", repo, prompt="hi there")
    prompt["prompt_id"] = "p-1"
    first = run_hook("user-prompt-submit", prompt, home, agent="claude")
    second = run_hook("user-prompt-submit", prompt, home, agent="claude")
    assert (first.returncode, second.returncode, second.stdout) == (0, 0, "")
    prompt["prompt_id"] = "p-2"  # the same text as a new prompt is a new event
    run_hook("user-prompt-submit", prompt, home, agent="claude")
    db = sqlite3.connect(home / "colony.db")
    (count,) = db.execute("SELECT COUNT(*) FROM observations WHERE kind = 'prompt'").fetchone()
    db.close()
    assert count == 2
