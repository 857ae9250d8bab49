"""Delivery (:mod:`colony_tasks.domain.delivery`): what each session has not been given yet, exactly
once, and what could not reach its recipient."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony_tasks.domain import delivery, sessions
from colony_tasks.store import Store
from colony_tasks.usecases import actions
from tests.support.helpers import join

# One set of tests, two stores: SQLite and a real PostgreSQL server (tests/conftest.py).
pytestmark = pytest.mark.both_backends


def texts(updates: delivery.Updates) -> list[str]:
    return [o.text for o in updates.items]


def test_each_session_sees_every_other_message_once_never_its_own(store: Store, repo: Path):
    a = join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo)
    actions.post(store, "a", "a1")
    actions.post(store, "b", "b1")
    actions.post(store, "a", "a2")
    join(store, "c", "claude", repo)  # joins late
    actions.post(store, "c", "c1")

    assert texts(actions.updates_since(store, "a")) == ["b1", "c1"]
    assert texts(actions.updates_since(store, "b")) == ["a1", "a2", "c1"]
    assert texts(actions.updates_since(store, "c")) == ["a1", "b1", "a2"]
    for sid in "abc":
        assert actions.updates_since(store, sid).items == []
    actions.post(store, "b", "b2")
    assert texts(actions.updates_since(store, "a")) == ["b2"]
    assert texts(actions.updates_since(store, "c")) == ["b2"]
    assert a.task.id == b.task.id


def test_since_id_reads_without_moving_the_cursor(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    join(store, "b", "codex", repo)
    first = actions.post(store, "a", "one")
    actions.post(store, "a", "two")
    peek = actions.updates_since(store, "b", since_id=first.id)
    assert texts(peek) == ["two"]
    assert texts(actions.updates_since(store, "b", since_id=0)) == ["one", "two"]
    assert texts(actions.updates_since(store, "b")) == ["one", "two"]


def test_limit_leaves_the_rest_for_the_next_call(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    join(store, "b", "codex", repo)
    for i in range(5):
        actions.post(store, "a", f"m{i}")
    first = actions.updates_since(store, "b", limit=3)
    assert texts(first) == ["m0", "m1", "m2"] and first.remaining == 2
    second = actions.updates_since(store, "b", limit=3)
    assert texts(second) == ["m3", "m4"] and second.remaining == 0


def test_others_edits_of_files_i_touched_are_delivered(store: Store, repo: Path):
    a = join(store, "a", "claude", repo)
    join(store, "b", "codex", repo)
    repo_id = a.lane.repo_id
    store.add_observation(
        "edit",
        "a edited api.py",
        session_id="a",
        task_id=a.task.id,
        paths=["src/api.py"],
        repo_id=repo_id,
    )
    store.add_observation(
        "edit",
        "b edited api.py",
        session_id="b",
        task_id=a.task.id,
        paths=["src/api.py"],
        repo_id=repo_id,
    )
    store.add_observation(
        "edit",
        "b edited other.py",
        session_id="b",
        task_id=a.task.id,
        paths=["src/other.py"],
        repo_id=repo_id,
    )
    assert texts(actions.updates_since(store, "a")) == ["b edited api.py"]


def test_an_answered_question_is_never_reported_undelivered(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo).session
    question = actions.ask(store, "a", "which port?", to=b.handle)
    actions.answer(store, "b", question.id, "8080")  # b never had a hook in between
    assert store.recipients(question.id)[0]["state"] == "delivered"
    sessions.end_session(store, store.get_session("b"))
    assert not store.inbox("a").undeliverable


def test_a_pending_question_to_an_ended_session_is_reported_once(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo).session
    question = actions.ask(store, "a", "which port?", to=b.handle)
    sessions.end_session(store, store.get_session("b"))
    assert [r["observation_id"] for r in store.undelivered_for_sender("a")] == [question.id]
    assert store.undelivered_for_sender("a") == []
