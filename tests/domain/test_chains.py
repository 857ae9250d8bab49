from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from colony_tasks.base.errors import Conflict, NotAllowed
from colony_tasks.domain import chains, delivery, messages, sessions, tasks
from colony_tasks.render import briefing
from colony_tasks.store import Store, open_store
from colony_tasks.usecases import actions, records
from tests.support.helpers import join, snapshot

# One set of tests, two stores: SQLite and a real PostgreSQL server (tests/conftest.py).
pytestmark = pytest.mark.both_backends


@pytest.fixture
def crew(store: Store, repo: Path):
    """A coordinator (claude) and two agents, plus a human."""
    for sid, agent in [("coord", "claude"), ("a1", "claude"), ("a2", "codex")]:
        join(store, sid, agent, repo)
    sessions.human_session(store, "alice", str(repo))
    return store


def test_coordinator_holds_the_first_turn_and_others_are_rejected_by_name(crew: Store):
    chain = chains.create(crew, crew.get_session("coord"), "design review")
    assert chain.mode == "chain" and chain.lane_id is None and chain.turn_holder == "coord"
    chains.add(crew, crew.get_session("coord"), chain.id, "a1", "Review the schema")
    handle = crew.get_session("a1").handle
    with pytest.raises(NotAllowed, match=f"It is {handle}'s turn in chain {chain.id}"):
        actions.chain_say(crew, "coord", chain.id, "coordinator out of turn")
    actions.chain_say(crew, "a1", chain.id, "Schema looks fine")
    assert crew.get_task(chain.id).turn_holder == "coord"  # returned automatically
    with pytest.raises(NotAllowed):
        actions.chain_say(crew, "a1", chain.id, "a second message without the turn")


def test_questions_and_handoffs_on_a_chain_obey_the_turn_rule(crew: Store):
    chain = chains.create(crew, crew.get_session("coord"), "c")
    chains.add(crew, crew.get_session("coord"), chain.id, "a1", "go")
    chains.add(crew, crew.get_session("coord"), chain.id, "a2", "you too")  # a2 holds the turn now
    with pytest.raises(NotAllowed):
        actions.ask(crew, "a1", "may I?", task_id=chain.id)
    with pytest.raises(NotAllowed):
        actions.hand_off(crew, "a1", "take it", task_id=chain.id)
    actions.ask(crew, "a2", "a question in turn", task_id=chain.id)


def test_only_the_coordinator_adds_passes_and_closes(crew: Store):
    chain = chains.create(crew, crew.get_session("coord"), "c")
    chains.add(crew, crew.get_session("coord"), chain.id, "a1", "go")
    for action in (
        lambda: chains.add(crew, crew.get_session("a1"), chain.id, "a2", "join"),
        lambda: chains.pass_turn(crew, crew.get_session("a1"), chain.id, "a1", "me"),
        lambda: chains.close(crew, crew.get_session("a1"), chain.id),
    ):
        before = snapshot(crew)
        with pytest.raises(NotAllowed, match="Only the coordinator"):
            action()
        assert snapshot(crew) == before


def test_a_human_can_coordinate_or_take_part(crew: Store):
    alice = crew.get_session("human:alice")
    chain = chains.create(crew, alice, "human-led")
    chains.add(crew, alice, chain.id, "a1", "draft it")
    actions.chain_say(crew, "a1", chain.id, "drafted")
    chains.pass_turn(crew, alice, chain.id, "alice", "my turn")
    actions.chain_say(crew, alice, chain.id, "approved")
    other = chains.create(crew, crew.get_session("coord"), "agent-led")
    chains.add(crew, crew.get_session("coord"), other.id, "alice", "please decide")
    actions.chain_say(crew, "human:alice", other.id, "decided")
    assert crew.get_task(other.id).turn_holder == "coord"


def test_late_participant_receives_the_whole_history_once_in_order(crew: Store):
    chain = chains.create(crew, crew.get_session("coord"), "c")
    chains.add(crew, crew.get_session("coord"), chain.id, "a1", "first task")
    actions.chain_say(crew, "a1", chain.id, "first answer")
    actions.chain_say(crew, "coord", chain.id, "coordinator note")
    posted = chains.add(crew, crew.get_session("coord"), chain.id, "a2", "your part")
    me = crew.get_session("a2")
    updates = actions.updates_since(crew, me, chain.id)
    assert [o.id for o in updates.items] == [posted.id]  # the history folds into the turn block
    block = briefing.turn_block(crew, me, updates.items[0])
    order = ["started chain", "first task", "first answer", "coordinator note", "Prompt from"]
    positions = [block.index(word) for word in order]
    assert positions == sorted(positions) and "the full history" in block
    assert actions.updates_since(crew, me, chain.id).items == []


def test_mid_turn_delivery_of_a_turn_is_not_repeated_at_the_next_prompt(crew: Store):
    chain = chains.create(crew, crew.get_session("coord"), "c")
    actions.chain_say(crew, "coord", chain.id, "context")
    chains.add(crew, crew.get_session("coord"), chain.id, "a2", "go")
    delivered = delivery.deliver_directed(crew, crew.get_session("a2"))
    assert [o.kind for o in delivered] == ["turn"]
    assert actions.updates_since(crew, "a2", chain.id).items == []


def test_pass_delivers_what_was_said_since_the_participant_last_spoke(crew: Store):
    chain = chains.create(crew, crew.get_session("coord"), "c")
    chains.add(crew, crew.get_session("coord"), chain.id, "a1", "one")
    actions.chain_say(crew, "a1", chain.id, "a1 spoke")
    chains.add(crew, crew.get_session("coord"), chain.id, "a2", "two")
    actions.chain_say(crew, "a2", chain.id, "a2 spoke")
    turn = chains.pass_turn(crew, crew.get_session("coord"), chain.id, "a1", "again")
    block = briefing.turn_block(crew, crew.get_session("a1"), crew.get_observation(turn.id))
    assert "a2 spoke" in block and "a1 spoke" not in block and "since you last spoke" in block


def test_closed_chain_is_complete_immutable_and_attributed(crew: Store):
    chain = chains.create(crew, crew.get_session("coord"), "c")
    chains.add(crew, crew.get_session("coord"), chain.id, "a1", "go")
    actions.chain_say(crew, "a1", chain.id, "done")
    closed = chains.close(crew, crew.get_session("coord"), chain.id)
    assert closed.status == "done"
    before = snapshot(crew)
    for attempt in (
        lambda: actions.chain_say(crew, "coord", chain.id, "after close"),
        lambda: chains.add(crew, crew.get_session("coord"), chain.id, "a2", "late"),
        lambda: actions.post(crew, "a1", "sneak", task_id=chain.id),
    ):
        with pytest.raises((Conflict, NotAllowed)):
            attempt()
    assert snapshot(crew) == before
    history = chains.history(crew, chain.id)
    assert [o.turn for o in history] == list(range(1, len(history) + 1))
    assert all(o.session_id and o.created_at for o in history)
    assert [o.kind for o in history] == ["turn", "turn", "note", "turn"]


def _racer(db_path: str, sid: str, chain_id: int, barrier, queue) -> None:
    db = open_store(db_path)
    barrier.wait()
    outcomes = []
    for i in range(4):
        try:
            actions.chain_say(db, sid, chain_id, f"{sid} attempt {i}")
            outcomes.append("ok")
        except NotAllowed:
            outcomes.append("rejected")
    queue.put((sid, outcomes))
    db.close()


def test_concurrent_posts_only_the_turn_holder_lands_and_turns_are_sequential(
    store_address: str, repo: Path
):
    path = store_address
    db = open_store(path)
    sids = ["coord", "p1", "p2", "p3", "p4"]
    for sid in sids:
        join(db, sid, "claude" if sid != "p4" else "codex", repo)
    chain = chains.create(db, db.get_session("coord"), "race")
    for sid in sids[1:]:
        chains.add(db, db.get_session("coord"), chain.id, sid, "join")
    chains.pass_turn(db, db.get_session("coord"), chain.id, "p2", "your turn, p2")
    db.close()
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(5), ctx.Queue()
    procs = [ctx.Process(target=_racer, args=(path, s, chain.id, barrier, queue)) for s in sids]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    results = dict(queue.get(timeout=5) for _ in procs)
    assert sum(len(v) for v in results.values()) == 20
    db = open_store(path)
    notes = [o for o in chains.history(db, chain.id) if o.kind == "note"]
    landed = {sid: outcomes.count("ok") for sid, outcomes in results.items()}
    assert len(notes) == sum(landed.values())
    # p2 held the turn: its first post lands and hands the turn back; then only the
    # coordinator (who holds it from then on) can land posts.
    assert landed["p2"] == 1 and landed["p1"] == landed["p3"] == landed["p4"] == 0
    assert notes[0].session_id == "p2"
    assert all(o.session_id in ("p2", "coord") for o in notes)
    turns = [o.turn for o in chains.history(db, chain.id)]
    assert turns == list(range(1, len(turns) + 1))


def test_loop_guard_trips_at_the_limit_posts_the_refusal_and_resets(crew: Store, home: Path):
    Path(home).mkdir(parents=True, exist_ok=True)
    (Path(home) / "settings.json").write_text(json.dumps({"chains": {"loop_limit": 3}}))
    task = tasks.default_task(crew, crew.get_session("a1"))
    a1, a2 = crew.get_session("a1").handle, crew.get_session("a2").handle
    for i in range(3):
        actions.ask(crew, "a1" if i % 2 == 0 else "a2", f"ping {i}", to=a2 if i % 2 == 0 else a1)
    with pytest.raises(messages.LoopGuard, match="A human needs to weigh in"):
        actions.ask(crew, "a2", "ping 3", to=a1)
    guard = crew.timeline(task.id, kinds=["guard"])
    assert len(guard) == 1 and "3 agent-to-agent requests" in guard[0].text
    with pytest.raises(messages.LoopGuard):  # a broadcast question counts too
        actions.ask(crew, "a1", "anyone at all?")
    actions.post(crew, "human:alice", "ok, here is what I think", task_id=task.id)  # human event
    actions.ask(crew, "a2", "ping after reset", to=a1)


def test_a_user_prompt_resets_the_loop_guard(crew: Store, home: Path):
    Path(home).mkdir(parents=True, exist_ok=True)
    (Path(home) / "settings.json").write_text(json.dumps({"chains": {"loop_limit": 2}}))
    a1, a2 = crew.get_session("a1"), crew.get_session("a2")
    actions.ask(crew, a1, "q1", to=a2.handle)
    actions.ask(crew, a2, "q2", to=a1.handle)
    with pytest.raises(messages.LoopGuard):
        actions.hand_off(crew, a1, "h", to=a2.handle)
    records.record_prompt(crew, a1, "the user says: keep going")
    handoff = actions.hand_off(crew, a1, "h", to=a2.handle)
    stored = crew.get_observation(handoff.id)
    assert (stored.kind, stored.status, stored.to) == ("handoff", "pending", a2.handle)


def test_question_to_a_session_that_ends_is_reported_back_to_the_asker(crew: Store):
    a2 = crew.get_session("a2")
    q = actions.ask(crew, "a1", "are you done with the parser?", to=a2.handle)
    assert [r["state"] for r in q.recipients] == ["pending"]
    sessions.end_session(crew, crew.get_session("a2"))
    reported = crew.undelivered_for_sender("a1")
    assert [(r["observation_id"], r["recipient_handle"]) for r in reported] == [(q.id, a2.handle)]
    assert crew.undelivered_for_sender("a1") == []  # told once
    summary = actions.show_task(crew, q.task_id)
    assert [(u["id"], u["state"]) for u in summary["undelivered"]] == [
        (q.id, "undeliverable-reported")
    ]


def test_delivery_state_is_returned_per_recipient(crew: Store):
    a2 = crew.get_session("a2")
    q = actions.ask(crew, "a1", "ping", to=a2.handle)
    assert q.recipients[0]["state"] == "pending"
    actions.updates_since(crew, "a2")
    assert crew.recipients(q.id)[0]["state"] == "delivered"
