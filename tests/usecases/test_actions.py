"""Actions (:mod:`colony_tasks.usecases.actions`): a refused action changes nothing in the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony_tasks.base.errors import Conflict, InvalidInput, NotAllowed, NotFound
from colony_tasks.domain import posts, tasks
from colony_tasks.store import Store
from colony_tasks.usecases import actions
from tests.support.helpers import join, snapshot

# One set of tests, two stores: SQLite and a real PostgreSQL server (tests/conftest.py).
pytestmark = pytest.mark.both_backends


ERROR_CASES = [
    (lambda s, ids: actions.post(s, "a", "x", to="nobody"), NotFound),
    (lambda s, ids: actions.post(s, "a", "x", to="outsider"), NotFound),
    (lambda s, ids: actions.post(s, "a", "x", task_id=ids["closed"]), Conflict),
    (lambda s, ids: actions.post(s, "a", "   "), InvalidInput),
    (lambda s, ids: actions.post(s, "a", "x" * 20_000), InvalidInput),
    (lambda s, ids: actions.post(s, "a", "x", kind="shout"), InvalidInput),
    (lambda s, ids: actions.post(s, "a", "fake answer", kind="answer"), InvalidInput),
    (lambda s, ids: actions.post(s, "b", "fake accept", kind="accept"), InvalidInput),
    (lambda s, ids: actions.post(s, "a", "x", task_id=999), NotFound),
    (lambda s, ids: actions.post(s, "a", "x", in_reply_to=999), NotFound),
    (lambda s, ids: actions.answer(s, "b", 999, "x"), NotFound),
    (lambda s, ids: actions.answer(s, "a", ids["question"], "self"), InvalidInput),
    (lambda s, ids: actions.accept_handoff(s, "a", ids["handoff"]), InvalidInput),
    (lambda s, ids: actions.accept_handoff(s, "b", 999), NotFound),
    (lambda s, ids: posts.withdraw(s, s.get_session("b"), ids["question"]), NotAllowed),
    (lambda s, ids: actions.claim(s, "a", ["/etc/passwd"]), InvalidInput),
    (lambda s, ids: actions.claim(s, "a", ["../outside.txt"]), InvalidInput),
    (lambda s, ids: actions.claim(s, "a", ["ok.py"], ttl_minutes=0), InvalidInput),
    (lambda s, ids: actions.claim(s, "a", []), InvalidInput),
    (lambda s, ids: actions.hand_off(s, "a", "x", files=["/tmp/elsewhere"]), InvalidInput),
    (lambda s, ids: actions.updates_since(s, "a", limit=0), InvalidInput),
]


@pytest.mark.parametrize("case,error", ERROR_CASES)
def test_every_error_leaves_the_database_unchanged(
    store: Store, repo: Path, tmp_path: Path, case, error
):

    join(store, "a", "claude", repo)
    join(store, "b", "codex", repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    join(store, "outsider", "codex", elsewhere)
    closed = tasks.create_task(store, "done already", created_by="a")
    store.set_task_status(closed.id, "done")
    ids = {
        "closed": closed.id,
        "question": actions.ask(store, "a", "q?").id,
        "handoff": actions.hand_off(store, "a", "h").id,
    }
    before = snapshot(store)
    with pytest.raises(error):
        case(store, ids)
    assert snapshot(store) == before
