"""Shared test helpers: a populated lane and a full-database snapshot."""

from __future__ import annotations

from pathlib import Path

from colony_tasks import sessions
from colony_tasks.store import Store


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
