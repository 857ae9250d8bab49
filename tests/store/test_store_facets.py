"""The store's rarely used parts are facets made on first use: ``store.vectors``,
``store.admin``, ``store.overview`` and ``store.graph``. They run on both backends (this module
is a contract module: its ``store`` tests run on SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from colony_tasks.store import Store
from tests.conftest import Clock

# One set of tests, two stores: SQLite and a real PostgreSQL server (tests/conftest.py).
pytestmark = pytest.mark.both_backends

FACET_MODULES = [
    "colony_tasks.store.vectors",
    "colony_tasks.store.maintenance",
    "colony_tasks.store.overview",
    "colony_tasks.store.depgraph",
]

FIRST_USE = """
import json, sys
from colony_tasks.store import Store
modules = %r
store = Store(sys.argv[1])
lane = store.upsert_lane("/r/.git", "/r", "r", "main")
store.insert_session("s1", "claude-1", "claude", "/r", lane.id, 1)
store.add_observation("note", "hello", session_id="s1")
opened = [m for m in modules if m in sys.modules]
asked = [hasattr(store, "lease_unembedded"), hasattr(store, "integrity_check")]
after_hasattr = [m for m in modules if m in sys.modules]
counts = store.vectors.counts()
same = store.vectors is store.vectors
print(json.dumps([opened, asked, after_hasattr, counts, same,
                  [m for m in modules if m in sys.modules]]))
"""


def test_a_facet_module_loads_only_when_its_property_is_first_read(tmp_path: Path):
    out = subprocess.run(
        [sys.executable, "-c", FIRST_USE % FACET_MODULES, str(tmp_path / "f.db")],
        capture_output=True,
        text=True,
        check=True,
    )
    opened, asked, after_hasattr, counts, same, loaded = json.loads(out.stdout)
    assert opened == [] and after_hasattr == []  # hasattr loads nothing
    assert asked == [False, False]  # the moved methods are not on the store any more
    assert counts == {} and same
    assert loaded == ["colony_tasks.store.vectors"]


def test_reading_every_facet_leaves_the_store_class_as_it_was(tmp_path: Path):
    mro = Store.__mro__
    store = Store(tmp_path / "m.db")
    try:
        store.vectors.counts()
        store.admin.integrity_check()
        store.overview.lanes()
        store.graph.overview()
    finally:
        store.close()
    assert Store.__mro__ == mro


def test_an_attribute_error_inside_a_store_property_keeps_its_message(tmp_path: Path):
    class Broken(Store):
        @property
        def settings(self) -> str:
            raise AttributeError("the real cause: no settings file")

    store = Broken(tmp_path / "b.db")
    try:
        with pytest.raises(AttributeError, match="the real cause"):
            store.settings  # noqa: B018 - reading it is the test
        with pytest.raises(AttributeError, match="no attribute 'no_such_method'"):
            store.no_such_method  # type: ignore[attr-defined]  # noqa: B018
    finally:
        store.close()


# -- the facets on both backends -------------------------------------------------------------


def seed(store: Store) -> tuple[int, int, int]:
    """A lane, two sessions on one task, a question and an edit: (lane, task, question) ids."""
    lane = store.upsert_lane("/r/.git", "/r", "r", "main")
    store.insert_session("s1", "claude-1", "claude", "/r", lane.id, 1)
    store.insert_session("s2", "codex-2", "codex", "/r", lane.id, 2)
    task = store.insert_task("ship it", lane_id=lane.id)
    store.add_participant(task, "s1")
    store.add_participant(task, "s2")
    question = store.add_observation(
        "question", "which port?", session_id="s1", task_id=task, status="pending"
    )
    store.add_observation(
        "edit", "edited a.py", session_id="s2", task_id=task, paths=["a.py"], repo_id="/r/.git"
    )
    return lane.id, task, question


def test_vectors_are_leased_saved_and_read_back(store: Store):
    seed(store)
    assert not store.vectors.any()
    leased = store.vectors.lease_unembedded("m", "me", limit=10)
    assert len(leased) == 2
    assert store.vectors.lease_unembedded("m", "other", limit=10) == []  # leased to "me"
    rows = [(obs, 2, f"h{obs}", bytes([obs]) * 8) for obs, _ in leased]
    assert store.vectors.save("m", "me", rows) == 2
    assert store.vectors.any() and store.vectors.counts() == {"m": 2}
    assert store.vectors.count_unembedded("m") == 0 and store.vectors.count_unembedded("n") == 2
    first = leased[-1][0]
    assert store.vectors.by_hash("m", [f"h{first}", "nope"]) == {
        f"h{first}": (2, bytes([first]) * 8)
    }
    after = store.vectors.after("m", 0)
    assert sorted(r[1] for r in after) == sorted(obs for obs, _ in leased)
    assert [r[0] for r in after] == sorted(r[0] for r in after)  # in row order
    assert store.vectors.after("m", after[0][0]) == after[1:]
    assert store.vectors.last_row() == after[-1][0]
    assert store.vectors.for_observations("m", [first]) == {first: bytes([first]) * 8}
    store.vectors.release_leases("m", "me")


def test_admin_checks_a_healthy_store(store: Store, clock: Clock):
    seed(store)
    store.insert_claim("s1", None, "/r/.git", None, "a.py", None, "", 60)
    assert store.admin.integrity_check() == ["ok"]
    assert {"observations", "vectors", "dep_files"} <= set(store.admin.table_names())
    assert store.admin.fts_indexed_count() == store.count_observations() == 2
    assert store.admin.fts_consistent()
    assert store.admin.expired_unreleased_claims() == 0
    clock.advance(3600)
    assert store.admin.expired_unreleased_claims() == 1
    busy, _, _ = store.admin.checkpoint()
    assert busy == 0 and store.admin.wal_bytes() >= 0


def test_overview_reads_lanes_participants_and_resolutions(store: Store):
    lane, task, question = seed(store)
    assert [lane_.branch for lane_ in store.overview.lanes().values()] == ["main"]
    members = store.overview.participants_by_task([task])
    assert [s.handle for s in members[task]] == ["claude-1", "codex-2"]
    store.set_observation_status(question, "answered", resolved_by="s2")
    resolved = store.overview.resolutions([question])
    assert resolved[question]["status"] == "answered"
    assert resolved[question]["resolved_by"] == "codex-2"
    by_session = store.overview.open_tasks_by_session()
    assert [t["id"] for t in by_session["s1"]] == [task]


def test_graph_saves_and_reads_a_work_tree(store: Store):
    lane, _, _ = seed(store)
    store.graph.save(
        "/r",
        root="/r",
        config_json="{}",
        skipped={"binary": 1},
        files=[("a.py", "python", 1, 2, "h", None, "[]", "[]")],
        edges=[("a.py", "b.py", "[]")],
        edits_seen=0,
    )
    state = store.graph.repo("/r")
    assert state is not None and state["root"] == "/r"
    files, edges = store.graph.rows("/r")
    assert [f[0] for f in files] == ["a.py"] and [e[:2] for e in edges] == [("a.py", "b.py")]
    [overview] = store.graph.overview()
    assert (overview["files"], overview["edges"], overview["skipped"]) == (1, 1, {"binary": 1})
    edits = store.graph.edits_after([lane], 0)
    assert [e["path"] for e in edits] == ["a.py"]
    store.graph.set_edits_seen("/r", edits[-1]["id"])
    assert store.graph.repo("/r")["edits_seen"] == edits[-1]["id"]  # type: ignore[index]
    assert [lane_.id for lane_ in store.graph.lanes_with_live_sessions(0)] == [lane]
