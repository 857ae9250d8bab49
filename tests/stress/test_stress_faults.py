"""Fault injection: writers killed mid-transaction, a locked database, a full disk, corruption.

Whatever happens to the process or the file underneath, a hook exits 0 within a bounded time
and logs what went wrong, the store is never left half-written, and ``doctor`` says clearly
what is wrong with a damaged file.
"""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from colony_tasks.cli import cli
from colony_tasks.domain import sessions
from colony_tasks.domain.claims import AUTO_NOTE
from colony_tasks.hooks import transport
from colony_tasks.store import Store
from colony_tasks.store.schema import LATEST
from tests.support.contracts import check_claude
from tests.support.helpers import snapshot
from tests.support.hookrun import claude, run_hook
from tests.support.stress_util import HERE, hook_job, log_text, run_together, scaled

pytestmark = pytest.mark.stress

KILLS = scaled(50, minimum=5)
MIGRATION_KILLS = scaled(20, minimum=3)


def every_event(sid: str, repo: Path, prompt: str = "hello") -> list[tuple[str, dict[str, Any]]]:
    """One payload per hook event, each of which writes to the store."""
    edit = {"tool_name": "Edit", "tool_input": {"file_path": str(repo / "src" / "a.py")}}
    return [
        ("session-start", claude("session-start", sid, repo, source="startup")),
        ("user-prompt-submit", claude("user-prompt-submit", sid, repo, prompt=prompt)),
        ("pre-tool-use", claude("pre-tool-use", sid, repo, **edit)),
        ("post-tool-use", claude("post-tool-use", sid, repo, tool_response={}, **edit)),
        ("stop", claude("stop", sid, repo, stop_hook_active=False)),
        ("session-end", claude("session-end", sid, repo, reason="other")),
    ]


def populate(home: Path, repo: Path, prompts: int = 12) -> None:
    for event, payload in every_event("seed", repo)[:2]:
        assert run_hook(event, payload, home).returncode == 0
    for i in range(prompts):
        payload = claude("user-prompt-submit", "seed", repo, prompt=f"stored prompt {i} " * 20)
        assert run_hook("user-prompt-submit", payload, home).returncode == 0


def assert_fail_open(results: list, *, expect_empty_stdout: bool = True) -> None:
    for done in results:
        event = done.job.args[2]
        assert (done.returncode, done.stderr) == (0, ""), (event, done.stderr)
        if expect_empty_stdout:
            assert done.stdout == "", (event, done.stdout)
        elif event != "session-end":
            check_claude(event, done.stdout)


# -- SIGKILL during a burst of writes ----------------------------------------------------------


def consistency_problems(store: Store) -> list[str]:
    """Every way a half-written message, claim transfer or edit would show."""
    problems = []
    if store.admin.integrity_check() != ["ok"]:
        problems.append(f"integrity: {store.admin.integrity_check()}")
    if (
        not store.admin.fts_consistent()
        or store.admin.fts_indexed_count() != store.count_observations()
    ):
        problems.append("fts index out of step with observations")
    rows = {
        r["id"]: dict(r)
        for r in store.conn.execute(
            "SELECT id, session_id, kind, meta, status, resolved_by, in_reply_to, to_target"
            " FROM observations"
        )
    }
    claims = [dict(r) for r in store.conn.execute("SELECT * FROM claims")]
    by_note: dict[str, list[dict]] = defaultdict(list)
    held: dict[str, set[str]] = defaultdict(set)  # every claim a session ever got
    live: set[tuple[str, str]] = set()
    for c in claims:
        by_note[c["note"]].append(c)
        held[c["session_id"]].add(c["pattern"])
        if c["released_at"] is None:
            live.add((c["session_id"], c["pattern"]))
    recipients = {r[0] for r in store.conn.execute("SELECT observation_id FROM recipients")}
    edited: dict[int, set[str]] = defaultdict(set)
    for obs_id, path in store.conn.execute("SELECT observation_id, path FROM observation_paths"):
        edited[obs_id].add(path)
    accepts: dict[int, list[dict]] = defaultdict(list)
    for row in rows.values():
        if row["kind"] == "accept":
            accepts[row["in_reply_to"]].append(row)
    for row in rows.values():
        meta = json.loads(row["meta"])
        if row["kind"] == "handoff":
            got = accepts.get(row["id"], [])
            moved = by_note.get(f"from handoff #{row['id']}", [])
            if row["status"] == "accepted":
                if len(got) != 1 or got[0]["session_id"] != row["resolved_by"]:
                    problems.append(f"accepted handoff {row['id']} has accept messages {got}")
                taken = {c["pattern"] for c in moved if c["session_id"] == row["resolved_by"]}
                if taken != set(meta["files"]):
                    problems.append(f"handoff {row['id']}: claims {taken} != {meta['files']}")
                kept = [f for f in meta["files"] if (row["session_id"], f) in live]
                if kept:
                    problems.append(f"handoff {row['id']}: giver still holds {kept}")
            elif got or moved:
                problems.append(f"pending handoff {row['id']} has {got} / {moved}")
        elif row["kind"] == "accept":
            handoff = rows.get(row["in_reply_to"])
            if handoff is None or handoff["status"] != "accepted":
                problems.append(f"accept {row['id']} for a handoff that is not accepted")
        elif row["kind"] == "claim":
            if not set(meta["paths"]) <= held[row["session_id"]]:
                problems.append(f"claim message {row['id']} without its claims")
        elif row["kind"] == "edit":
            paths = edited.get(row["id"], set())
            if not paths or not paths <= held[row["session_id"]]:
                problems.append(f"edit {row['id']} without its paths or auto-claims")
        if row["to_target"] is not None and row["id"] not in recipients:
            problems.append(f"directed {row['kind']} {row['id']} has no recipients")
    edits = {
        (rows[obs_id]["session_id"], path)
        for obs_id, paths in edited.items()
        if rows.get(obs_id, {}).get("kind") == "edit"
        for path in paths
    }
    for c in claims:
        if c["note"] == AUTO_NOTE and (c["session_id"], c["pattern"]) not in edits:
            problems.append(f"auto-claim {c['id']} without its edit")
    return problems


def wait_for_line(path: Path, text: str, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text():
            return
        if proc.poll() is not None:
            raise AssertionError(f"writer exited early: {path.read_text()}")
        time.sleep(0.002)
    raise AssertionError(f"writer never printed {text!r}")


def test_a_writer_killed_at_random_points_never_leaves_a_half_written_message(
    home: Path, repo: Path, tmp_path: Path
):
    home.mkdir()
    # Two agents handing work back and forth with no human: lift the loop guard, which now
    # counts broadcast handoffs too.
    (home / "settings.json").write_text('{"chains": {"loop_limit": 1000000}}')
    with Store(home / "colony.db") as store:
        sessions.register(store, "giver", agent="claude", cwd=str(repo))
        sessions.register(store, "taker", agent="codex", cwd=str(repo))
    rng = random.Random(7)
    committed: dict[str, set] = {"handoff": set(), "accept": set(), "edit": set(), "post": set()}
    steps = 0
    for n in range(KILLS):
        out = tmp_path / f"writer-{n}.out"
        with open(out, "wb") as sink:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    str(HERE / "stress_writer.py"),
                    str(n),
                    "giver",
                    "taker",
                    str(repo),
                ],
                stdout=sink,
                stderr=subprocess.PIPE,
                env={**os.environ, "COLONY_TASKS_HOME": str(home)},
            )
        wait_for_line(out, "ready\n", proc)
        time.sleep(rng.uniform(0, 0.25))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()
        proc.stderr.close()
        lines = out.read_text().split("\n")[:-1]  # the last piece may be cut mid-line
        for line in lines[1:]:
            kind, *ids = line.split()
            committed[kind].add(tuple(ids))
        steps += len(lines) - 1
        with Store(home / "colony.db") as store:
            assert consistency_problems(store) == [], f"after kill {n}"
            stored = {
                str(r[0]): r[1] for r in store.conn.execute("SELECT id, kind FROM observations")
            }
            edited = {r[0] for r in store.conn.execute("SELECT path FROM observation_paths")}
        # Everything the writer reported as committed survived the kill.
        assert all(stored.get(h) == "handoff" for (h,) in committed["handoff"])
        assert all(stored.get(a) == "accept" for _, a in committed["accept"])
        assert all(stored.get(p) == "note" for (p,) in committed["post"])
        assert {p for (p,) in committed["edit"]} <= edited

    with Store(home / "colony.db") as store:
        kinds = dict(
            store.conn.execute("SELECT kind, COUNT(*) FROM observations GROUP BY kind").fetchall()
        )
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    checks = {c["check"]: c for c in json.loads(result.output)["checks"]}
    assert checks["integrity"]["ok"] and checks["fts"]["ok"], checks
    assert kinds["accept"] >= KILLS // 2  # the kills landed inside a real burst of writes
    print(f"{KILLS} kills, {steps} committed writes reported, stored kinds {kinds}")


# Opens a new store and SIGKILLs itself after ``argv[1]`` ticks of SQLite's progress handler
# (one tick per 10 virtual-machine instructions): a kill at a random point inside migrations,
# mid-statement included, independent of the machine's speed. Prints the ticks if it survives.
KILL_AFTER_TICKS = """
import os, signal, sqlite3, sys
limit, ticks, real = int(sys.argv[1]), [0], sqlite3.connect
def tick():
    ticks[0] += 1
    if ticks[0] >= limit:
        os.kill(os.getpid(), signal.SIGKILL)
    return 0
def connect(*args, **kwargs):
    conn = real(*args, **kwargs)
    conn.set_progress_handler(tick, 10)
    return conn
sqlite3.connect = connect
from colony_tasks.store import open_default
open_default().close()
print(ticks[0])
"""


def test_a_process_killed_while_migrating_leaves_a_recorded_schema_version(tmp_path: Path):
    def open_new(home: Path, limit: int) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", KILL_AFTER_TICKS, str(limit)],
            capture_output=True,
            text=True,
            env={**os.environ, "COLONY_TASKS_HOME": str(home)},
        )

    total = int(open_new(tmp_path / "calibrate", 10**9).stdout)
    rng = random.Random(11)
    landed = []
    for n in range(MIGRATION_KILLS):
        home = tmp_path / f"m{n}"
        done = open_new(home, rng.randint(1, total))
        assert done.returncode == -signal.SIGKILL, done.stderr
        raw = sqlite3.connect(home / "colony.db")
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        version = raw.execute("PRAGMA user_version").fetchone()[0]
        if version:
            recorded = raw.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0]
            assert recorded == version
        else:
            tables = raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
            assert tables == []  # the first migration left nothing behind
        raw.close()
        landed.append(version)
        with Store(home / "colony.db") as store:
            assert store.schema_version() == LATEST
            assert store.admin.integrity_check() == ["ok"] and store.admin.fts_consistent()
    assert len(set(landed)) > 1 or MIGRATION_KILLS < 10  # kills landed at different migrations
    print(f"{MIGRATION_KILLS} kills while migrating a new store; versions left: {landed}")


# -- a locked database ---------------------------------------------------------------------------


def lock(db: Path, how: str) -> sqlite3.Connection:
    """Hold the database past every hook's busy timeout."""
    conn = sqlite3.connect(db, isolation_level=None)
    if how == "exclusive-mode":
        # The connection keeps the file lock itself: readers are shut out as well.
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("UPDATE sessions SET cwd = cwd")
        conn.execute("COMMIT")
    else:
        conn.execute("BEGIN EXCLUSIVE")
    return conn


@pytest.mark.parametrize("how", ["write-transaction", "exclusive-mode"])
def test_hooks_exit_0_within_a_bound_and_log_when_the_database_stays_locked(
    home: Path, repo: Path, tmp_path: Path, how: str
):
    populate(home, repo, prompts=1)
    before = snapshot_of(home)
    jobs = [
        hook_job(event, payload, home)
        for _ in range(2)
        for event, payload in every_event("seed", repo)
    ]
    if how == "exclusive-mode":
        # Another program holds the file in exclusive mode: it can take that only while no
        # other connection is open, so the relay the populating hooks started goes first.
        from tests.conftest import stop_relays

        stop_relays(home)
    conn = lock(home / "colony.db", how)
    try:
        start = time.monotonic()
        results, _ = run_together(jobs)
        elapsed = time.monotonic() - start
    finally:
        conn.close()
    assert_fail_open(results)
    assert elapsed < transport.DEADLINE_SECONDS + 4, elapsed
    lines = log_text(home, tmp_path).splitlines()
    # Every hook logged its failure; the relay, which tried the events first, its own.
    hooks = [line for line in lines if " hook " in line]
    assert len(hooks) == len(jobs) and all("database is locked" in line for line in lines), lines
    # Nothing stored before was touched. Rows may have been added: the relay, still waiting on
    # the lock when it went away, can apply an event its hook had given up on (once: the
    # events' keys are unique).
    after = snapshot_of(home)
    assert set(before["observations"]) <= set(after["observations"])
    added = [row for row in after["observations"] if row not in before["observations"]]
    assert sum(row[3] == "prompt" for row in added) <= 2, added  # each prompt job's at most once
    with Store(home / "colony.db") as store:
        assert store.admin.integrity_check() == ["ok"]
    print(f"{how}: {len(jobs)} hooks against a held lock finished in {elapsed:.1f}s")


def snapshot_of(home: Path) -> dict[str, list[tuple]]:
    with Store(home / "colony.db") as store:
        return snapshot(store)


# -- a full disk ---------------------------------------------------------------------------------


def mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir()
    if os.geteuid() != 0:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True,
    )
    return done.returncode == 0


def fill(folder: Path) -> None:
    """Write a filler file until the file system refuses another byte."""
    with open(folder / "filler", "wb", buffering=0) as handle:
        for chunk in (65536, 4096, 1):
            try:
                while True:
                    handle.write(b"\0" * chunk)
            except OSError:
                continue


def limit_file_size(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.parametrize("wal", ["cold", "warm"])
@pytest.mark.parametrize("medium", ["tmpfs", "rlimit"])
def test_a_full_disk_fails_open_and_damages_nothing_already_stored(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch, medium: str, wal: str
):
    """cold: no WAL file yet; warm: another connection (an MCP server) keeps WAL and shm."""
    mount = tmp_path / "disk"
    if medium == "tmpfs":
        # Room for the store and the WAL hook processes leave behind (they exit without a
        # checkpoint); fill() then takes every byte that is left.
        if not mount_tmpfs(mount, "8m"):
            pytest.skip("cannot mount a tmpfs here (needs root); the rlimit variant covers it")
    else:
        mount.mkdir()
    home = mount / "home"
    monkeypatch.setenv("COLONY_TASKS_HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    try:
        populate(home, repo)
        keeper = sqlite3.connect(home / "colony.db", isolation_level=None)
        keeper.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        before = snapshot_of(home)
        if wal == "cold":
            keeper.close()  # the last connection removes the WAL and shm files
        preexec = None
        env = {}
        if medium == "tmpfs":
            fill(mount)  # the relay the populating hooks started writes to the full disk too
        else:
            # A file-size limit binds the hook processes only: they apply their events
            # themselves (the relay, started earlier, has no limit).
            preexec = limit_file_size(4096)
            env = {"COLONY_TASKS_RELAY": "off"}
        jobs = []
        for sid in ("seed", "newcomer"):
            for event, payload in every_event(sid, repo, prompt="p" * 4000):
                job = hook_job(event, payload, home, **env)
                job.preexec = preexec
                jobs.append(job)
        results, _ = run_together(jobs)
        assert_fail_open(results)
        lines = log_text(home, tmp_path).splitlines()
        failures = [line for line in lines if " failed: " in line or " held for later: " in line]
        # Held for the full disk, or behind an event held for it (order is kept).
        reasons = ("disk", "I/O", "events before it are still held")
        assert all(any(r in line for r in reasons) for line in failures), [
            line for line in failures if not any(r in line for r in reasons)
        ]
        # An event the store could not take is held (colony_tasks.relay.held: beside the
        # store, or in the private temp folder when the full disk refuses that too) or, past
        # that, logged as failed; or its (small) write got in: a warm WAL can still take a
        # one-page insert. Most cannot; none may fail any other way (above).
        assert len(failures) >= len(jobs) // 2, failures
        assert sum("session-end" in line for line in failures) >= 1
        held_here = sum(" held for later: " in line for line in failures)
        if wal == "warm":
            keeper.close()
        (mount / "filler").unlink(missing_ok=True)

        # Nothing stored before was touched (rows may have been added), and the store works
        # again once there is room.
        after = snapshot_of(home)
        for table, rows in before.items():
            assert set(rows) <= set(after[table]), table
        with Store(home / "colony.db") as store:
            assert store.admin.integrity_check() == ["ok"] and store.admin.fts_consistent()
        payload = claude("user-prompt-submit", "seed", repo, prompt="room again")
        assert run_hook("user-prompt-submit", payload, home).returncode == 0
        if held_here:
            # What was held is recorded once room is back, each event once.
            prompts = [r for r in snapshot_of(home)["observations"] if r[3] == "prompt"]
            assert sum(str(r[4]).startswith("pppp") for r in prompts) == 2, prompts
        with Store(home / "colony.db") as store:
            texts = [r[0] for r in store.conn.execute("SELECT text FROM observations")]
        assert texts[-1] == "room again"
        print(f"{medium}/{wal}: {len(jobs)} hooks on a full disk, {len(failures)} logged")
    finally:
        if medium == "tmpfs":
            subprocess.run(["umount", "-l", str(mount)], capture_output=True)


# -- a corrupted database file -------------------------------------------------------------------


def corrupt(db: Path, how: str) -> None:
    raw = sqlite3.connect(db)
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = raw.execute("PRAGMA page_size").fetchone()[0]
    roots = dict(raw.execute("SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0"))
    raw.close()
    size = db.stat().st_size
    with open(db, "r+b") as handle:
        if how == "header":
            handle.write(b"not a database, really" * 8)
        elif how == "truncated":
            handle.truncate(size // 2)
        else:  # one table's root page overwritten with garbage
            handle.seek((roots[how] - 1) * page)
            handle.write(random.Random(how).randbytes(page))


DOCTOR_SAYS = {
    "header": "cannot be opened as a SQLite database",
    "truncated": "cannot be opened as a SQLite database",
}


@pytest.mark.parametrize(
    "how",
    ["header", "truncated", "observations", "sessions", "claims"],
)
def test_a_corrupted_database_fails_open_and_doctor_says_so(
    home: Path, repo: Path, tmp_path: Path, how: str
):
    populate(home, repo)
    db = home / "colony.db"
    corrupt(db, how)
    inode = db.stat().st_ino
    jobs = [hook_job(e, p, home) for e, p in every_event("seed", repo)]
    jobs += [hook_job(e, p, home) for e, p in every_event("new", repo)]
    results, _ = run_together(jobs)
    assert_fail_open(results, expect_empty_stdout=False)
    assert db.stat().st_ino == inode  # the damaged file is kept for inspection, not replaced

    result = CliRunner().invoke(cli, ["doctor"])
    assert isinstance(result.exception, SystemExit) and result.exit_code == 1, result.output
    if how in DOCTOR_SAYS:
        assert DOCTOR_SAYS[how] in result.output
    else:
        assert "✗ integrity: database disk image is malformed" in result.output
    report = CliRunner().invoke(cli, ["doctor", "--json"])
    assert report.exit_code == 1 and json.loads(report.output)["ok"] is False


@pytest.mark.parametrize("how", ["observations", "sessions"])
def test_doctor_fix_on_a_corrupted_database_reports_and_repairs_nothing(
    home: Path, repo: Path, how: str
):
    populate(home, repo)
    db = home / "colony.db"
    corrupt(db, how)
    damaged = db.read_bytes()
    result = CliRunner().invoke(cli, ["doctor", "--fix"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert "✗ integrity" in result.output
    assert db.read_bytes() == damaged  # the damaged file is left as it was, for inspection
