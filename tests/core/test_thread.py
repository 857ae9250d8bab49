from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from colony_tasks import actions, delivery, posts, sessions, tasks
from colony_tasks.errors import ColonyError, Conflict, InvalidInput, NotAllowed, NotFound
from colony_tasks.store import Store, open_store
from tests.support.helpers import join, snapshot

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


def test_directed_question_is_pending_until_answered_and_asker_sees_answer(
    store: Store, repo: Path
):
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo)
    join(store, "c", "claude", repo)
    q = actions.ask(store, "a", "Which port?", to=b.session.handle)
    assert [r["handle"] for r in q.recipients] == [b.session.handle]
    assert [o.id for o in delivery.pending_for(store, "b")] == [q.id]
    assert delivery.pending_for(store, "c") == []
    with pytest.raises(NotAllowed, match="addressed to"):
        actions.answer(store, "c", q.id, "8080")
    result = actions.answer(store, "b", q.id, "8080")
    assert result.ok and result.answered_by == b.session.handle
    assert delivery.pending_for(store, "b") == []
    news = actions.updates_since(store, "a")
    assert [(o.kind, o.text, o.in_reply_to) for o in news.items] == [("answer", "8080", q.id)]


def test_question_to_an_agent_kind_reaches_sessions_of_that_kind(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    join(store, "b", "codex", repo)
    join(store, "c", "codex", repo)
    q = actions.ask(store, "a", "Codex folks: who owns the parser?", to="codex")
    assert len(q.recipients) == 2
    assert [o.id for o in delivery.pending_for(store, "c")] == [q.id]
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


def _race_answer(db_path: str, sid: str, question_id: int, barrier, queue) -> None:
    db = open_store(db_path)
    barrier.wait()
    try:
        queue.put((sid, actions.answer(db, sid, question_id, f"answer from {sid}").ok))
    except ColonyError as error:
        queue.put((sid, repr(error)))
    db.close()


def _race_accept(db_path: str, sid: str, handoff_id: int, barrier, queue) -> None:
    db = open_store(db_path)
    barrier.wait()
    try:
        actions.accept_handoff(db, sid, handoff_id)
        queue.put((sid, True))
    except Conflict:
        queue.put((sid, False))
    db.close()


def _race(target, db_path: str, item_id: int, sids: list[str]) -> list[tuple[str, object]]:
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(len(sids)), ctx.Queue()
    procs = [ctx.Process(target=target, args=(db_path, s, item_id, barrier, queue)) for s in sids]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    return [queue.get(timeout=5) for _ in procs]


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
    results = dict(_race(_race_answer, path, q.id, ["x", "y"]))
    assert sorted(results.values()) == [False, True]
    db = open_store(path)
    assert len(db.timeline(q.task_id, kinds=["answer"])) == 1
    assert len(db.timeline(q.task_id, kinds=["note"])) == 1


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
    results = dict(_race(_race_accept, path, h.id, ["x", "y"]))
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
    assert [o.id for o in delivery.pending_for(store, "b")] == [h.id]
    accepted = actions.accept_handoff(store, "b", h.id)
    assert [c["pattern"] for c in accepted.claims] == ["src/a.py"]
    holders = {c["pattern"]: c["session_id"] for c in store.list_claims()}
    assert holders == {"src/a.py": "b", "src/b.py": "a"}
    assert delivery.pending_for(store, "b") == []
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
        posts.withdraw(store, "b", h.id)
    posts.withdraw(store, "a", h.id)
    with pytest.raises(Conflict, match="withdrawn"):
        actions.accept_handoff(store, "b", h.id)
    assert delivery.pending_for(store, "b") == []


def test_decisions_and_open_blockers_appear_in_the_summary(store: Store, repo: Path):
    a = join(store, "a", "claude", repo)
    join(store, "b", "codex", repo)
    d = actions.record_decision(store, "a", "Use SQLite WAL", rationale="many readers")
    blk = actions.report_blocker(store, "b", "CI is red", waiting_on="a")
    s = actions.show_task(store, a.task.id)
    assert [o.id for o in s["decisions"]] == [d.id]
    assert "Rationale: many readers" in s["decisions"][0].text
    assert [o.id for o in s["blockers"]] == [blk.id]
    actions.resolve_blocker(store, "a", blk.id)
    assert actions.show_task(store, a.task.id)["blockers"] == []


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
    (lambda s, ids: posts.withdraw(s, "b", ids["question"]), NotAllowed),
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


def test_an_answered_question_is_never_reported_undelivered(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo).session
    question = actions.ask(store, "a", "which port?", to=b.handle)
    actions.answer(store, "b", question.id, "8080")  # b never had a hook in between
    assert store.recipients(question.id)[0]["state"] == "delivered"
    sessions.end_session(store, "b")
    assert not store.has_undeliverable("a")


def test_a_pending_question_to_an_ended_session_is_reported_once(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo).session
    question = actions.ask(store, "a", "which port?", to=b.handle)
    sessions.end_session(store, "b")
    assert [r["observation_id"] for r in store.undelivered_for_sender("a")] == [question.id]
    assert store.undelivered_for_sender("a") == []
