"""Handoffs (:mod:`colony_tasks.domain.handoffs`): accepted once, with their claims, only by whom they
are addressed to."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony_tasks.base.errors import Conflict, NotAllowed
from colony_tasks.domain import delivery, posts
from colony_tasks.store import Store, open_store
from colony_tasks.usecases import actions
from tests.support.helpers import join, race

# One set of tests, two stores: SQLite and a real PostgreSQL server (tests/conftest.py).
pytestmark = pytest.mark.both_backends


def _race_accept(db_path: str, sid: str, handoff_id: int, barrier, queue) -> None:
    db = open_store(db_path)
    barrier.wait()
    try:
        actions.accept_handoff(db, sid, handoff_id)
        queue.put((sid, True))
    except Conflict:
        queue.put((sid, False))
    db.close()


def test_two_processes_accepting_one_broadcast_handoff_exactly_one_wins(
    store_address: str, repo: Path
):
    path = store_address
    db = open_store(path)
    join(db, "author", "claude", repo)
    join(db, "x", "codex", repo)
    join(db, "y", "claude", repo)
    actions.claim(db, "author", ["src/app.py"])
    h = actions.hand_off(db, "author", "take the app", files=["src/app.py"])
    db.close()
    results = dict(race(_race_accept, path, h.id, ["x", "y"]))
    assert sorted(results.values()) == [False, True]
    winner = next(s for s, ok in results.items() if ok)
    db = open_store(path)
    live = db.list_claims()
    assert [(c["session_id"], c["pattern"]) for c in live] == [(winner, "src/app.py")]


def test_accepting_handoff_transfers_claims_and_closes_it(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo)
    actions.claim(store, "a", ["src/a.py", "src/b.py"])
    h = actions.hand_off(store, "a", "finish the parser", to=b.session.handle, files=["src/a.py"])
    assert [o.id for o in delivery.pending_for(store, store.get_session("b"))] == [h.id]
    accepted = actions.accept_handoff(store, "b", h.id)
    assert [c["pattern"] for c in accepted.claims] == ["src/a.py"]
    holders = {c["pattern"]: c["session_id"] for c in store.list_claims()}
    assert holders == {"src/a.py": "b", "src/b.py": "a"}
    assert delivery.pending_for(store, store.get_session("b")) == []
    with pytest.raises(Conflict, match=f"already accepted by {b.session.handle}"):
        actions.accept_handoff(store, "b", h.id)


def test_handoff_withdrawn_or_addressed_elsewhere_cannot_be_accepted(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo)
    join(store, "c", "claude", repo)
    h = actions.hand_off(store, "a", "for b only", to=b.session.handle)
    with pytest.raises(NotAllowed, match="addressed to"):
        actions.accept_handoff(store, "c", h.id)
    with pytest.raises(NotAllowed, match="Only its author"):
        posts.withdraw(store, store.get_session("b"), h.id)
    posts.withdraw(store, store.get_session("a"), h.id)
    with pytest.raises(Conflict, match="withdrawn"):
        actions.accept_handoff(store, "b", h.id)
    assert delivery.pending_for(store, store.get_session("b")) == []
