"""Shared test helpers: a populated lane and a full-database snapshot."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

from colony_tasks.domain import sessions
from colony_tasks.store import Store, open_local


def join(store: Store, sid: str, agent: str, cwd: Path) -> sessions.Joined:
    return sessions.register(store, sid, agent=agent, cwd=str(cwd))


def snapshot(store: Store) -> dict[str, list[tuple]]:
    """Every row of every table (FTS shadow tables excluded), in a stable order."""
    if store.backend == "postgresql":
        names = [
            r[0]
            for r in store.conn.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = current_schema()"
            )
        ]
        return {
            n: sorted((tuple(r) for r in store.conn.execute(f"SELECT * FROM {n}")), key=repr)
            for n in names
        }
    names = [
        r[0]
        for r in store.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'observations_fts%'"
        )
    ]
    return {n: [tuple(r) for r in store.conn.execute(f"SELECT * FROM {n}")] for n in names}


def fill(store: Store, holder: str, n: int, pattern: str = "src/m{i}/f.py", glob: int = 0) -> None:
    """Give ``holder`` ``n`` live claims at once (one statement): a store at scale."""
    session = store.get_session(holder)
    lane = store.get_lane(session.lane_id)
    task = store.conn.execute("SELECT id FROM tasks LIMIT 1").fetchone()[0]
    now = store.now()
    rows = [
        (
            holder,
            task,
            lane.repo_id,
            lane.id,
            pattern.format(i=i),
            glob,
            None,
            "",
            now,
            now,
            now + 3600,
        )
        for i in range(n)
    ]
    with store.transaction():
        store.conn.executemany(
            "INSERT INTO claims(session_id, task_id, repo_id, lane_id, pattern, is_glob, regex,"
            " note, created_at, renewed_at, expires_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )


def race(target, address: str, item_id: int, sids: list[str]) -> list[tuple[str, object]]:
    """Run ``target(address, sid, item_id, barrier, queue)`` in one process per session id,
    released together by a barrier; what each put on the queue."""
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(len(sids)), ctx.Queue()
    procs = [ctx.Process(target=target, args=(address, s, item_id, barrier, queue)) for s in sids]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    return [queue.get(timeout=5) for _ in procs]


def wait_held(sid: str, timeout: float = 10.0) -> None:
    """Until this user's relay holds a wake wait for ``sid`` (the session is shown wakeable in
    the store of ``COLONY_TASKS_HOME``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        store = open_local()
        try:
            row = store._one("SELECT wake_since FROM sessions WHERE id = ?", (sid,))
        finally:
            store.close()
        if row and row[0] is not None:
            return
        time.sleep(0.02)
    raise AssertionError(f"no wait held for {sid}")
