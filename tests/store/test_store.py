from __future__ import annotations

import multiprocessing
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from colony_tasks.base import paths
from colony_tasks.store import Store, open_default
from colony_tasks.store.schema import LATEST, MIGRATIONS, Migration


def tables(db: Store) -> set[str]:
    rows = db.conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")
    return {r[0] for r in rows}


def test_blank_database_migrates_to_the_latest_schema(store: Store):
    assert store.schema_version() == LATEST
    assert [m["version"] for m in store.applied_migrations()] == [m.version for m in MIGRATIONS]
    assert {
        "lanes",
        "sessions",
        "tasks",
        "participants",
        "observations",
        "claims",
        "recipients",
        "observations_fts",
    } <= tables(store)


def test_database_at_first_version_migrates_forward_keeping_rows(tmp_path: Path):
    path = tmp_path / "old.db"
    old = Store(path, migrations=MIGRATIONS[:1])
    assert old.schema_version() == 1
    old.conn.execute(
        "INSERT INTO observations(kind, text, created_at) VALUES ('prompt', ?, 1.0)",
        ("written before the upgrade",),
    )
    old.close()

    new = Store(path)
    assert new.schema_version() == LATEST
    (obs,) = new.get_observations([1])
    assert obs.text == "written before the upgrade"
    assert obs.status is None and obs.urgent is False
    assert new.fts_search('"upgrade"')[0][0].id == obs.id


def test_failing_migration_leaves_database_at_previous_version(tmp_path: Path):
    path = tmp_path / "fail.db"
    broken = (
        *MIGRATIONS,
        Migration(LATEST + 1, "broken", "CREATE TABLE good(x); SELEKT nonsense;"),
    )
    Store(path).close()
    with pytest.raises(sqlite3.OperationalError):
        Store(path, migrations=broken)
    db = Store(path)
    assert db.schema_version() == LATEST
    assert "good" not in tables(db)
    assert LATEST + 1 not in [m["version"] for m in db.applied_migrations()]


def test_up_to_date_open_runs_no_ddl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "c.db"
    Store(path).close()
    statements: list[str] = []
    original_connect = sqlite3.connect

    def tracing_connect(*args, **kwargs):
        conn = original_connect(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(sqlite3, "connect", tracing_connect)  # the module the store uses
    Store(path).close()
    assert not any("CREATE" in s.upper() or "ALTER" in s.upper() for s in statements)
    assert any("user_version" in s for s in statements)


def test_connection_settings(store: Store):
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    assert store.conn.isolation_level is None


def test_transaction_rolls_back_everything_on_error(store: Store):
    with pytest.raises(RuntimeError), store.transaction():
        store.add_observation("note", "first")
        store.add_observation("note", "second")
        raise RuntimeError("boom")
    assert store.count_observations() == 0


def test_home_folder_0700_and_files_0600_even_with_umask_000(home: Path):
    old = os.umask(0)
    try:
        db = open_default()
        db.add_observation("note", "x")
        paths.log("a line")
        db.close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    for name in ("colony.db", "hooks.log"):
        assert stat.S_IMODE((home / name).stat().st_mode) == 0o600


def _writer(path: str, worker: int, count: int, queue) -> None:
    db = Store(path)
    errors = 0
    for i in range(count):
        try:
            db.add_observation("command", f"worker {worker} row {i}", session_id=f"w{worker}")
        except sqlite3.OperationalError:
            errors += 1
    db.close()
    queue.put(errors)


def test_eight_processes_writing_at_once_lose_no_row(tmp_path: Path):
    path = str(tmp_path / "busy.db")
    Store(path).close()
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    workers = [ctx.Process(target=_writer, args=(path, w, 200, queue)) for w in range(8)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(120)
    assert [p.exitcode for p in workers] == [0] * 8
    assert sum(queue.get() for _ in workers) == 0
    db = Store(path)
    assert db.count_observations() == 8 * 200
    per_worker = db.conn.execute(
        "SELECT session_id, COUNT(*) FROM observations GROUP BY session_id"
    ).fetchall()
    assert sorted(n for _, n in per_worker) == [200] * 8


def test_a_second_store_in_one_process_keeps_the_first_ones_writes_visible(tmp_path: Path):
    """Opening a store must not open/close the database file behind SQLite's back: closing any
    descriptor drops the process's POSIX locks, another process may then delete the WAL that
    the first connection still writes to, and those writes vanish."""
    path = tmp_path / "shared.db"
    first = Store(path)
    second = Store(path)  # e.g. the MCP server's embedding worker
    other = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from colony_tasks.store import Store; s = Store(sys.argv[1]);"
            " s.add_observation('note', 'from another process'); s.close()",
            str(path),
        ],
        capture_output=True,
        text=True,
    )
    assert other.returncode == 0, other.stderr
    first.add_observation("note", "from the first store")
    fresh = sqlite3.connect(path)
    texts = {r[0] for r in fresh.execute("SELECT text FROM observations")}
    assert texts == {"from another process", "from the first store"}
    fresh.close()
    second.close()
    first.close()


def test_the_store_knows_the_latest_migration_without_importing_them():
    from colony_tasks.store import base

    assert base.LATEST == LATEST


def test_a_migrations_record_is_bound_not_formatted_into_sql(tmp_path: Path):
    path = tmp_path / "quoted.db"
    quoted = Migration(LATEST + 1, "it's; DROP TABLE sessions; --", "CREATE TABLE extra(x);")
    with Store(path, migrations=(*MIGRATIONS, quoted)) as db:
        assert db.applied_migrations()[-1]["name"] == "it's; DROP TABLE sessions; --"
        assert db.schema_version() == LATEST + 1
        assert db.conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0


def test_the_outbox_and_the_store_open_their_files_by_one_recipe(tmp_path: Path):
    from colony_tasks.base import sqlite_file
    from colony_tasks.relay.outbox import SCHEMA_VERSION, Outbox

    store = Store(tmp_path / "s.db")
    outbox = Outbox(str(tmp_path / "o.db"))
    try:
        for conn in (store.conn, outbox.conn):
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert outbox.conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
        assert sqlite_file.version(outbox.conn) == SCHEMA_VERSION
        assert (tmp_path / "o.db").stat().st_mode & 0o777 == 0o600
    finally:
        store.close()
        outbox.close()
