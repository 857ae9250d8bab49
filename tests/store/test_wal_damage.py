"""A damaged WAL after a crash: SQLite's replay silently drops every committed transaction
after the damage; the relay's start records the loss and keeps the log, and `doctor` says it."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from colony_tasks.base import paths
from colony_tasks.cli import cli
from colony_tasks.hooks.payload import request as hook_request
from colony_tasks.relay.apply import apply_here
from colony_tasks.relay.server import LocalRelay
from colony_tasks.store import open_default, wal
from colony_tasks.usecases import actions
from tests.support.helpers import join
from tests.support.hookrun import claude

PAGE = 4096


def crashed_copy(source: Path, target: Path, *, index: bool = False) -> None:
    """The database and its WAL (and its shared index) as a crash leaves them: copied while
    a connection is open (closing the last connection would checkpoint the log)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, target)
    shutil.copy(f"{source}-wal", f"{target}-wal")
    if index:
        shutil.copy(f"{source}-shm", f"{target}-shm")


def flip_byte(wal_path: str, frame: int) -> None:
    """One byte of frame ``frame``'s page (1-based) flipped: its checksum no longer holds."""
    at = wal.HEADER + (frame - 1) * (wal.FRAME_HEADER + PAGE) + wal.FRAME_HEADER + 100
    with open(wal_path, "r+b") as handle:
        handle.seek(at)
        byte = handle.read(1)
        handle.seek(at)
        handle.write(bytes([byte[0] ^ 0xFF]))


def plain_log(tmp_path: Path, rows: int) -> Path:
    db = tmp_path / "plain" / "x.db"
    db.parent.mkdir()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    for i in range(rows):
        conn.execute("INSERT INTO t (v) VALUES (?)", (f"row {i}" * 40,))
    crashed = tmp_path / "crashed" / "x.db"
    crashed_copy(db, crashed)
    conn.close()
    return crashed


def count_rows(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT count(*) FROM t").fetchone()[0]
    finally:
        conn.close()


def test_an_intact_log_after_a_crash_loses_nothing(tmp_path: Path):
    crashed = plain_log(tmp_path, 30)
    found = wal.scan(f"{crashed}-wal")
    assert found is not None and not found.damaged and found.broken_at is None
    assert found.replayed_commits == 31  # the table and its 30 rows
    assert count_rows(crashed) == 30


@pytest.mark.parametrize("frame", [5, 10, 25])
def test_the_scan_counts_exactly_what_the_replay_drops(tmp_path: Path, frame: int):
    crashed = plain_log(tmp_path, 30)
    flip_byte(f"{crashed}-wal", frame)
    found = wal.scan(f"{crashed}-wal")
    assert found is not None and found.damaged and found.broken_at == frame
    survived = count_rows(crashed)  # SQLite's own replay, the ground truth
    assert survived < 30
    assert found.replayed_commits - 1 == survived  # minus the CREATE TABLE
    assert found.lost_commits == 31 - found.replayed_commits


def test_an_unfinished_last_transaction_is_not_a_loss(tmp_path: Path):
    crashed = plain_log(tmp_path, 5)
    wal_path = f"{crashed}-wal"
    conn = sqlite3.connect(crashed, isolation_level=None)
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("INSERT INTO t (v) VALUES (?)", ("big" * 5000,))  # overflow pages + commit
    whole = wal.scan(wal_path)
    shutil.copy(wal_path, f"{wal_path}.keep")
    conn.close()
    shutil.move(f"{wal_path}.keep", wal_path)
    assert whole is not None and whole.replayed_commits == 7
    with open(wal_path, "r+b") as handle:  # the crash came before its commit frame was written
        handle.truncate(wal.HEADER + (whole.frames - 1) * (wal.FRAME_HEADER + PAGE))
    found = wal.scan(wal_path)
    assert found is not None and not found.damaged and found.lost_commits == 0
    assert found.replayed_commits == 6 and count_rows(crashed) == 5


def test_no_log_or_a_foreign_file_is_no_scan(tmp_path: Path):
    assert wal.scan(str(tmp_path / "none-wal")) is None
    junk = tmp_path / "junk-wal"
    junk.write_bytes(b"not a write-ahead log at all, just bytes" * 10)
    assert wal.scan(str(junk)) is None


def post_events(home: Path, repo: Path, n: int, *, index: bool = False) -> Path:
    """``n`` acknowledged events in the store of ``home``; the crashed copy's home."""
    store = open_default()
    store.conn.execute("PRAGMA wal_autocheckpoint = 0")
    me = join(store, "sess-wal", "claude", repo).session
    for i in range(n):
        actions.post(store, me.id, f"note {i}: " + "x" * 300)
    crashed_home = home.parent / "crashed-home"
    crashed_copy(Path(paths.db_path()), crashed_home / Path(paths.db_path()).name, index=index)
    store.close()
    return crashed_home


def notes(store_home: Path) -> int:
    conn = sqlite3.connect(store_home / Path(paths.db_path()).name)
    try:
        return conn.execute("SELECT count(*) FROM observations WHERE kind = 'note'").fetchone()[0]
    finally:
        conn.close()


def doctor_wal() -> dict:
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    return {c["check"]: c for c in json.loads(result.output)["checks"]}["wal"]


def test_a_relay_start_records_the_loss_and_doctor_names_it(
    home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    crashed_home = post_events(home, repo, 30)
    monkeypatch.setenv("COLONY_TASKS_HOME", str(crashed_home))
    flip_byte(paths.db_path() + "-wal", 12)
    relay = LocalRelay()  # the first open after the crash
    relay.close()
    survived = notes(crashed_home)
    [record] = wal.damage_records()
    assert survived < 30 and record["lost_commits"] >= 30 - survived
    assert record["broken_at_frame"] == 12
    assert Path(record["copy"]).is_file() and Path(record["copy"]).stat().st_mode & 0o077 == 0
    check = doctor_wal()
    assert not check["ok"]
    assert f"{record['lost_commits']} committed transactions" in check["detail"]
    assert "could not be replayed and are lost" in check["detail"]
    # A second relay start on the same log does not record the same loss again.
    LocalRelay().close()
    assert len(wal.damage_records()) == 1
    # `doctor --fix` marks it seen; the copy of the log stays, and it is not recorded again.
    CliRunner().invoke(cli, ["doctor", "--fix", "--json"])
    assert wal.damage_records() == [] and Path(record["copy"]).is_file()
    assert doctor_wal()["ok"]


def test_doctor_as_the_first_open_records_the_loss(
    home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    crashed_home = post_events(home, repo, 30)
    monkeypatch.setenv("COLONY_TASKS_HOME", str(crashed_home))
    flip_byte(paths.db_path() + "-wal", 12)
    check = doctor_wal()
    assert not check["ok"] and "after frame 12 could not be replayed" in check["detail"]


def first_hook(repo: Path) -> dict:
    """The first hook after the crash: no relay runs, it applies its event itself."""
    payload = claude("session-start", "s-after", repo, source="startup")
    req = hook_request("session-start", "claude", payload, json.dumps(payload).encode())
    return apply_here(req.to_wire(), check_wal=True)


def test_the_first_hook_after_a_crash_records_the_loss_before_its_write(
    home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    crashed_home = post_events(home, repo, 30, index=True)
    monkeypatch.setenv("COLONY_TASKS_HOME", str(crashed_home))
    flip_byte(paths.db_path() + "-wal", 12)
    first_hook(repo)
    [record] = wal.damage_records()
    assert record["broken_at_frame"] == 12 and record["lost_commits"] > 0
    found = wal.scan(record["copy"])
    assert found is not None and found.lost_commits == record["lost_commits"]
    LocalRelay().close()  # the relay it starts does not record it again
    assert len(wal.damage_records()) == 1


def test_an_open_after_a_clean_crash_with_its_index_records_nothing(
    home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    crashed_home = post_events(home, repo, 10, index=True)
    monkeypatch.setenv("COLONY_TASKS_HOME", str(crashed_home))
    first_hook(repo)
    assert wal.damage_records() == [] and notes(crashed_home) == 10


def test_a_clean_crash_records_nothing(home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch):
    crashed_home = post_events(home, repo, 10)
    monkeypatch.setenv("COLONY_TASKS_HOME", str(crashed_home))
    LocalRelay().close()
    assert notes(crashed_home) == 10 and wal.damage_records() == []
    assert doctor_wal()["ok"]
