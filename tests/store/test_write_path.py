"""Every write function of the store redacts every free text it stores.

The test finds the store's write functions itself (any method whose SQL inserts, updates or
deletes); each must appear below, either called with a secret in each of its text arguments or
listed with the reason it stores no free text. A new write function fails this test until it
is added here. Then no secret may appear in the raw bytes of the database or its WAL.
"""

from __future__ import annotations

import inspect
from functools import cached_property
from pathlib import Path

from colony_tasks.store import Store

SECRET = "ghp_" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"  # a GitHub classic token's shape
TEXT = f"deploy with token {SECRET} now"

# Methods that store no free text: only ids, numbers, states or enum values.
NO_FREE_TEXT = {
    "_apply": "runs a migration's own SQL",
    "add_participant": "task id, session id, cursor",
    "add_recipients": "observation id, session ids",
    "cap_claims": "session id and a time",
    "set_waiting": "session id and a state from colony_tasks.domain.presence (sanitised)",
    "end_session": "session id and a time",
    "admin.fts_consistent": "reads only (its DELETE is in a savepoint rolled back)",
    "vectors.lease_unembedded": "observation ids, a model name and an owner id",
    "mark_delivered": "session id, observation ids, and how ('wake', 'stop')",
    "unmark_delivered": "session id, observation ids",
    "woken_for_sender": "a time, observation and session ids",
    "set_wake_since": "session id and a time",
    "clear_wake_holds": "nothing but NULL",
    "set_stop_blocks": "session id and a count",
    "mark_undeliverable": "session id",
    "next_turn": "a counter",
    "rebuild_fts": "rebuilds the index from stored (already redacted) text",
    "release_claims": "session id; patterns only select rows",
    "release_all_claims": "session id and a time",
    "release_expired_claims": "times",
    "vectors.release_leases": "a model name and an owner id",
    "vectors.drop": "deletes only: model names select rows",
    "set_cursor": "ids",
    "set_observation_status": "an item status",
    "set_task_status": "a task status",
    "set_turn_holder": "a session id",
    "vectors.save": "vectors and content hashes",
    "undelivered_for_sender": "delivery states",
    "add_work_deps": "work item ids",
    "add_work_waiter": "task id, session id",
    "assign_work_item": "item id, owner session id",
    "pop_work_waiters": "task id",
    "remove_work_waiter": "task id, session id",
    "take_work_item": "item id, session id",
    "set_session_key_hash": "the hash of a derived key (colony_tasks.base.keys)",
    "claim_event": "a digest of a hook payload and a time",
    "prune_event_keys": "a time",
    "graph.set_edits_seen": "an observation id",
}


def writers(cls: type, prefix: str = "") -> set[str]:
    found = set()
    for name, fn in inspect.getmembers(cls, inspect.isfunction):
        source = inspect.getsource(fn)
        if any(word in source for word in ("INSERT", "UPDATE ", "DELETE")):
            found.add(prefix + name)
    return found


def write_methods(store: Store) -> set[str]:
    """The store's write methods, and its facets' as ``facet.method``."""
    found = writers(Store)
    for name, attribute in inspect.getmembers(Store):
        if isinstance(attribute, cached_property):
            found |= writers(type(getattr(store, name)), f"{name}.")
    return found


def call_every_text_writer(store: Store) -> set[str]:
    lane = store.upsert_lane(f"/repo/{SECRET}/.git", f"/repo/{SECRET}", TEXT, f"feature/{SECRET}")
    store.insert_session("s1", "claude-1", "claude", f"/home/{SECRET}", lane.id, 1)
    store.refresh_session("s1", cwd=f"/work/{SECRET}")
    task = store.insert_task(TEXT)
    store.add_observation(
        "note",
        TEXT,
        session_id="s1",
        task_id=task,
        meta={"rationale": TEXT, "nested": [TEXT]},
        paths=[f"src/{SECRET}.py"],
        repo_id=lane.repo_id,
    )
    claim = store.insert_claim(
        "s1", task, lane.repo_id, lane.id, f"src/{SECRET}.py", None, TEXT, 60
    )
    store.renew_claim(claim, 60, TEXT)
    store.first_read_note("s1", f"src/{SECRET}.py")
    store.save_region(
        "s1",
        lane.repo_id,
        lane.id,
        f"src/{SECRET}.py",
        base=TEXT,
        base_hash="h",
        changes=[(0, 1, TEXT)],
    )
    item = store.insert_work_item(task, TEXT, description=TEXT, files=[f"src/{SECRET}/**"])
    store.finish_work_item(item, "blocked", summary=TEXT, reason=TEXT)
    signature = f'[{{"name": "connect", "signature": "connect(token=\'{SECRET}\')"}}]'
    store.graph.save(
        "/work/tree",
        root="/work/tree",
        config_json="{}",
        skipped={},
        files=[(f"src/{SECRET}.py", "python", 1, 2, "h", TEXT, f'["{SECRET}"]', signature)],
        edges=[(f"src/{SECRET}.py", "src/b.py", f'["{SECRET}"]')],
    )
    return {
        "graph.save",
        "insert_work_item",
        "finish_work_item",
        "upsert_lane",
        "insert_session",
        "refresh_session",
        "insert_task",
        "add_observation",
        "insert_claim",
        "renew_claim",
        "first_read_note",
        "save_region",
    }


def test_every_write_function_is_accounted_for(store: Store):
    called = call_every_text_writer(store)
    assert write_methods(store) == called | set(NO_FREE_TEXT)


def test_no_secret_reaches_the_database_or_its_wal(tmp_path: Path):
    store = Store(tmp_path / "w.db")
    try:
        call_every_text_writer(store)
        raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("w.db"))
        rows = store.conn.execute("SELECT text, meta FROM observations").fetchall()
    finally:
        store.close()
    assert SECRET.encode() not in raw
    assert SECRET[:16].encode() not in raw
    assert "[REDACTED:" in rows[0][0] and "[REDACTED:" in rows[0][1]
