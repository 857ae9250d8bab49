"""Posts (:mod:`colony_tasks.domain.posts`): questions to sessions, agent kinds or anyone, and their
answers, the first of which wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony_tasks.base.errors import ColonyError, NotAllowed, NotFound
from colony_tasks.domain import delivery
from colony_tasks.store import Store, open_store
from colony_tasks.usecases import actions
from tests.support.helpers import join, race

# One set of tests, two stores: SQLite and a real PostgreSQL server (tests/conftest.py).
pytestmark = pytest.mark.both_backends


def _race_answer(db_path: str, sid: str, question_id: int, barrier, queue) -> None:
    db = open_store(db_path)
    barrier.wait()
    try:
        queue.put((sid, actions.answer(db, sid, question_id, f"answer from {sid}").ok))
    except ColonyError as error:
        queue.put((sid, repr(error)))
    db.close()


def test_directed_question_is_pending_until_answered_and_asker_sees_answer(
    store: Store, repo: Path
):
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo)
    join(store, "c", "claude", repo)
    q = actions.ask(store, "a", "Which port?", to=b.session.handle)
    assert [r["handle"] for r in q.recipients] == [b.session.handle]
    assert [o.id for o in delivery.pending_for(store, store.get_session("b"))] == [q.id]
    assert delivery.pending_for(store, store.get_session("c")) == []
    with pytest.raises(NotAllowed, match="addressed to"):
        actions.answer(store, "c", q.id, "8080")
    result = actions.answer(store, "b", q.id, "8080")
    assert result.ok and result.answered_by == b.session.handle
    assert delivery.pending_for(store, store.get_session("b")) == []
    news = actions.updates_since(store, "a")
    assert [(o.kind, o.text, o.in_reply_to) for o in news.items] == [("answer", "8080", q.id)]


def test_question_to_an_agent_kind_reaches_sessions_of_that_kind(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    join(store, "b", "codex", repo)
    join(store, "c", "codex", repo)
    q = actions.ask(store, "a", "Codex folks: who owns the parser?", to="codex")
    assert len(q.recipients) == 2
    assert [o.id for o in delivery.pending_for(store, store.get_session("c"))] == [q.id]
    with pytest.raises(NotFound, match="No active human session"):
        actions.ask(store, "a", "anyone human?", to="human")


def test_second_answer_to_broadcast_question_is_kept_as_note(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo)
    join(store, "c", "claude", repo)
    q = actions.ask(store, "a", "Who can review?")
    assert actions.answer(store, "b", q.id, "me").ok
    late = actions.answer(store, "c", q.id, "me too")
    assert not late.ok and late.answered_by == b.session.handle
    assert f"already answered by {b.session.handle}" in late.message
    note = store.get_observation(late.note_id)
    assert note.kind == "note" and note.text == "me too" and note.in_reply_to == q.id


def test_two_processes_answering_one_broadcast_question_exactly_one_wins(
    store_address: str, repo: Path
):
    path = store_address
    db = open_store(path)
    join(db, "asker", "claude", repo)
    join(db, "x", "codex", repo)
    join(db, "y", "claude", repo)
    q = actions.ask(db, "asker", "Broadcast: who takes the migration?")
    db.close()
    results = dict(race(_race_answer, path, q.id, ["x", "y"]))
    assert sorted(results.values()) == [False, True]
    db = open_store(path)
    assert len(db.timeline(q.task_id, kinds=["answer"])) == 1
    assert len(db.timeline(q.task_id, kinds=["note"])) == 1
