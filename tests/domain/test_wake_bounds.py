"""Waking is scoped and bounded: the attacks of a session that wakes others across
repositories and without limit, run for a simulated minute on the store's clock.

- A session posts, asks and hands off only in lanes of repositories it works in; another
  repository's ``task_id`` is refused, saying why.
- A recipient is woken at most ``wake.per_minute`` times a minute, by one sender at most
  ``wake.per_sender_per_minute`` times; what is over the limit waits for its next turn.
- The loop guard counts every item that wakes (an urgent note as much as a question), and a
  woken turn's prompt is not human input: it does not reset the guard.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colony_tasks.base.errors import NotAllowed
from colony_tasks.domain import messages, sessions, wake
from colony_tasks.render import briefing
from colony_tasks.store import Store
from colony_tasks.usecases import actions, events, records
from colony_tasks.usecases.events import Event
from tests.support.gitutil import git, make_repo
from tests.support.helpers import join

pytestmark = pytest.mark.both_backends

MINUTE = 60.0
EVERY = 0.625  # one post every 0.625 s: 96 a minute, the rate the attack reached


def _settings(home: Path, **sections: dict) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps(sections))


@pytest.fixture
def two_repos(store: Store, tmp_path: Path, repo: Path, home: Path):
    """An agent in one repository; an idle session of another repository, waiting to be woken."""
    other = make_repo(tmp_path / "other")
    me = join(store, "agent-a", "claude", repo).session
    victim = join(store, "victim-b", "claude", other)
    store.set_wake_since(victim.session.id, store.now())
    return store, me, victim.session, victim.task.id


@pytest.fixture
def idle(store: Store, repo: Path, home: Path):
    """Two agents on one lane; the first idles with a wake wait held."""
    sleeper = join(store, "idle-1", "claude", repo).session
    sender = join(store, "sender-1", "codex", repo).session
    store.set_wake_since(sleeper.id, store.now())
    return store, sleeper, sender


def _cross_repository_attempts(store: Store, me, victim, task_id: int) -> list[str]:
    """Post, ask and hand off to another repository's lane by its task id: what each did
    (``woke`` when the victim would be woken, else the refusal)."""
    attempts = {
        "post": lambda: actions.post(store, me, "Stop now.", task_id=task_id, urgent=True),
        "ask": lambda: actions.ask(store, me, "Port?", to=victim.handle, task_id=task_id),
        "hand_off": lambda: actions.hand_off(
            store, me, "Take it.", to=victim.handle, task_id=task_id
        ),
    }
    outcomes = []
    for name, attempt in attempts.items():
        try:
            attempt()
        except NotAllowed as refused:
            outcomes.append(f"{name}: refused: {refused}")
            continue
        woken = wake.claim(store, victim.id) if victim.id in wake.ready(store, [victim.id]) else []
        outcomes.append(f"{name}: woke" if woken else f"{name}: stored")
    return outcomes


def _flood(store: Store, sleeper, send, *, seconds: float = MINUTE, prompt: bool = False) -> dict:
    """Send one item every :data:`EVERY` seconds for ``seconds`` of store time; after each,
    the relay's check wakes the sleeper if it may (``prompt``: its woken turn starts with a
    prompt, the wake text). Counts wakes, items accepted and items refused."""
    counts = {"wakes": 0, "sent": 0, "refused": 0, "ids": []}
    end = store.now() + seconds
    while store.now() < end:
        try:
            counts["ids"].append(send().id)
            counts["sent"] += 1
        except messages.LoopGuard:
            counts["refused"] += 1
        if sleeper.id in wake.ready(store, [sleeper.id]):
            items = wake.claim(store, sleeper.id)
            if items:
                counts["wakes"] += 1
                if prompt:
                    text = briefing.wake_text(store, sleeper.id, items)
                    events.prompt(store, Event(sleeper.id, "claude", sleeper.cwd), text)
        store.clock.advance(EVERY)
    print(
        f"\n{send.__name__}: {counts['wakes']} wakes, {counts['sent']} sent, {counts['refused']} refused"
    )
    return counts


# -- scope: repositories a session works in ---------------------------------------------------


def test_posting_asking_and_handing_off_into_another_repositorys_lane_is_refused(two_repos):
    store, me, victim, task_id = two_repos
    outcomes = _cross_repository_attempts(store, me, victim, task_id)
    print("\n" + "\n".join(outcomes))
    assert [o.split(":")[1].strip() for o in outcomes] == ["refused"] * 3
    assert all("another repository" in o for o in outcomes), outcomes
    assert wake.ready(store, [victim.id]) == {}
    assert not store.is_participant(task_id, me.id)


# -- the attacks for a simulated minute ------------------------------------------------------


def test_urgent_notes_wake_an_idle_session_a_bounded_number_of_times(idle, home: Path):
    store, sleeper, sender = idle

    def urgent_note():
        return actions.post(store, sender, "Release freeze: stop editing.", urgent=True)

    counts = _flood(store, sleeper, urgent_note)
    assert counts["sent"] == messages.loop_limit()  # the loop guard counts urgent notes
    assert counts["refused"] == 96 - messages.loop_limit()
    assert counts["wakes"] == wake.PER_SENDER_PER_MINUTE


def test_questions_stop_at_the_loop_limit_even_when_the_woken_turn_starts_with_a_prompt(
    idle, home: Path
):
    store, sleeper, sender = idle

    def question():
        return actions.ask(store, sender, "Which port?", to=sleeper.handle)

    counts = _flood(store, sleeper, question, prompt=True)
    assert counts["sent"] == messages.loop_limit(), counts  # the woken prompts reset nothing
    assert counts["wakes"] == wake.PER_SENDER_PER_MINUTE


def test_a_session_may_still_post_to_another_branch_of_its_own_repository(
    two_repos, repo, tmp_path
):
    store, me, victim, _ = two_repos
    git(repo, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "feature"))
    feature = join(store, "feature-1", "codex", tmp_path / "feature")
    posted = actions.post(store, me, "Rebase on main first.", task_id=feature.task.id, urgent=True)
    assert [r["handle"] for r in posted.recipients] == [feature.session.handle]


def test_a_session_may_post_where_it_recorded_work_before_it_moved(two_repos, repo, tmp_path):
    store, me, victim, task_id = two_repos
    idler = join(store, "idler-c", "codex", repo).session  # was in the lane, did nothing there
    records.record_prompt(store, me, "fix the parser")
    old_task = store.open_lane_task(me.lane_id)
    moved = join(store, me.id, "claude", tmp_path / "other").session
    drifted = join(store, idler.id, "codex", tmp_path / "other").session
    assert moved.lane_id == drifted.lane_id != old_task.lane_id
    actions.post(store, moved, "Moved to the other repository.", task_id=old_task.id)
    with pytest.raises(NotAllowed, match="another repository"):
        actions.post(store, drifted, "Moved too.", task_id=old_task.id)


def test_a_human_joins_a_session_to_another_repositorys_task_by_reassigning_it_work(
    two_repos, tmp_path
):
    store, me, victim, task_id = two_repos
    human = sessions.human_session(store, "alice", str(tmp_path / "other"))
    plan = actions.plan_work(store, human, [{"title": "Port the parser"}], task_id=task_id)
    with pytest.raises(NotAllowed, match="another repository"):
        actions.post(store, me, "Can I help?", task_id=task_id)
    actions.reassign_work(store, human, plan.ids[0], me.handle, task_id=task_id)
    asked = actions.ask(store, me, "Which parser?", to=victim.handle, task_id=task_id)
    assert [r["handle"] for r in asked.recipients] == [victim.handle]


def test_a_human_posts_anywhere_and_an_agent_adds_only_its_repositorys_sessions_to_a_chain(
    two_repos, tmp_path
):
    store, me, victim, task_id = two_repos
    human = sessions.human_session(store, "alice", str(tmp_path))
    actions.post(store, human, "Heads up: release on Friday.", task_id=task_id, urgent=True)
    chain = actions.chain_create(store, me, "parser")
    with pytest.raises(NotAllowed, match="another repository"):
        actions.chain_add(store, me, chain.chain_id, victim.handle, "Review the parser.")
    led = actions.chain_create(store, human, "cross-repo review")
    added = actions.chain_add(store, human, led.chain_id, victim.handle, "Review the parser.")
    assert [r["handle"] for r in added.recipients] == [victim.handle]


# -- wake budgets ------------------------------------------------------------------------------


@pytest.fixture
def unguarded(idle, home: Path):
    """The idle lane with the loop guard out of the way: the wake budgets alone bound wakes."""
    _settings(home, chains={"loop_limit": 100_000})
    return idle


def test_one_sender_wakes_a_recipient_at_most_its_budget_and_nothing_is_dropped(
    unguarded, repo: Path
):
    store, sleeper, sender = unguarded

    def urgent_note():
        return actions.post(store, sender, "Stop editing.", urgent=True)

    counts = _flood(store, sleeper, urgent_note)
    assert counts["refused"] == 0 and counts["sent"] == 96
    assert counts["wakes"] == wake.PER_SENDER_PER_MINUTE
    woken = {i for i in counts["ids"] if store.recipients(i)[0]["via"] == wake.VIA_WAKE}
    news = events.prompt(store, Event(sleeper.id, "claude", str(repo)), "next").updates
    seen = {o.id for u in news for o in u.items}
    while (more := actions.updates_since(store, sleeper)).items:
        seen |= {o.id for o in more.items}
    assert woken and woken | seen == set(counts["ids"]), "an item over the wake budget was lost"


def test_a_recipient_is_woken_at_most_its_budget_whoever_sends(unguarded, repo: Path):
    store, sleeper, sender = unguarded
    others = [join(store, f"sender-{n}", "codex", repo).session for n in range(2, 5)]
    turn = iter(range(10_000))

    def any_sender():
        who = [sender, *others][next(turn) % 4]
        return actions.ask(store, who, "Port?", to=sleeper.handle)

    counts = _flood(store, sleeper, any_sender)
    assert counts["wakes"] == wake.PER_MINUTE


def test_a_humans_questions_wake_whatever_the_budgets(unguarded, repo: Path):
    """The budgets bound agents waking agents; a developer asking from the CLI each time the
    session idles is answered every time (and an agent's CLI is never a human's)."""
    store, sleeper, _ = unguarded

    def human_question():
        return actions.as_human(
            store, "dana", str(repo), lambda me: actions.ask(store, me, "Port?", to=sleeper.handle)
        )

    counts = _flood(store, sleeper, human_question, seconds=12 * EVERY)
    assert counts["sent"] == 12 and counts["wakes"] == 12 > wake.PER_MINUTE


def test_a_withheld_wake_happens_once_the_minute_has_passed(unguarded):
    store, sleeper, sender = unguarded
    for _ in range(wake.PER_SENDER_PER_MINUTE):
        actions.post(store, sender, "Stop.", urgent=True)
        assert len(wake.claim(store, sleeper.id)) == 1
        store.clock.advance(1)
    late = actions.post(store, sender, "Really, stop.", urgent=True)
    assert wake.ready(store, [sleeper.id]) == {} and wake.claim(store, sleeper.id) == []
    (row,) = wake.annotate(store, late.id, store.recipients(late.id))
    assert row["wake"] == "next turn (wake limit reached)"
    store.clock.advance(wake.WINDOW)
    assert wake.ready(store, [sleeper.id]) == {sleeper.id: False}
    assert [o.id for o in wake.claim(store, sleeper.id)] == [late.id]


def test_the_wake_budgets_are_settings(unguarded, home: Path):
    store, sleeper, sender = unguarded
    _settings(
        home, chains={"loop_limit": 100_000}, wake={"per_minute": 1, "per_sender_per_minute": 1}
    )
    assert wake.budgets() == (1, 1)
    _settings(home, wake={"per_minute": True, "per_sender_per_minute": "2"})
    assert wake.budgets() == (wake.PER_MINUTE, wake.PER_SENDER_PER_MINUTE)
    _settings(home, chains={"loop_limit": 100_000}, wake={"per_minute": 1})
    other = join(store, "sender-2", "codex", sleeper.cwd).session
    actions.post(store, sender, "Stop.", urgent=True)
    assert wake.claim(store, sleeper.id)
    store.clock.advance(1)
    actions.ask(store, other, "Port?", to=sleeper.handle)
    assert wake.claim(store, sleeper.id) == []  # the recipient's one wake a minute is spent


def test_codexs_stop_gate_counts_against_the_same_budget(unguarded, repo: Path):
    store, _, sender = unguarded
    cx = join(store, "cx-1", "codex", repo).session
    held = 0
    for n in range(wake.PER_SENDER_PER_MINUTE + 2):
        actions.post(store, sender, f"Stop {n}.", urgent=True)
        held += bool(events.stop(store, Event(cx.id, "codex", str(repo))).gate)
        store.clock.advance(1)
    assert held == wake.PER_SENDER_PER_MINUTE


# -- the loop guard --------------------------------------------------------------------------


def test_the_loop_guard_counts_urgent_notes_but_not_chatter(idle, home: Path):
    store, sleeper, sender = idle
    _settings(home, chains={"loop_limit": 2})
    task_id = store.open_lane_task(sleeper.lane_id).id
    actions.post(store, sender, "Stop.", urgent=True)
    actions.post(store, sender, "Blocked on the schema.", kind="blocker", urgent=True)
    with pytest.raises(messages.LoopGuard):
        actions.post(store, sender, "Stop now.", urgent=True)
    actions.post(store, sender, "I am refactoring the parser.")  # chatter wakes no one
    human = join(store, "human:alice", "human", sleeper.cwd).session
    actions.post(store, human, "Go ahead.", task_id=task_id)
    actions.post(store, sender, "Stop now.", urgent=True)


def test_a_woken_turns_prompt_is_not_recorded_but_its_humans_next_prompt_is(idle, repo: Path):
    store, sleeper, sender = idle
    asked = actions.ask(store, sender, "Port?", to=sleeper.handle)
    items = wake.claim(store, sleeper.id)
    assert [o.id for o in items] == [asked.id]
    task_id = store.open_lane_task(sleeper.lane_id).id
    human_event = store.last_human_event(task_id)
    text = briefing.wake_text(store, sleeper.id, items)
    events.prompt(store, Event(sleeper.id, "claude", str(repo)), text)
    assert store.last_human_event(task_id) == human_event
    store.clock.advance(5)
    events.stop(store, Event(sleeper.id, "claude", str(repo)))
    store.clock.advance(5)
    events.prompt(store, Event(sleeper.id, "claude", str(repo)), "Answer it, then go on.")
    assert store.last_human_event(task_id) > human_event
