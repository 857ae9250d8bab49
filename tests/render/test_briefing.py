"""The briefing, the product's main output: what a session is told at SessionStart, and how
much. It must name the session's handle and task, who else is here and what they hold, what
waits on this session with the exact call, open blockers, and end with the tools line — all
within a fixed budget however busy the lane is."""

from __future__ import annotations

from pathlib import Path

from colony_tasks.domain import sessions
from colony_tasks.render import briefing
from colony_tasks.store import Store
from colony_tasks.usecases import actions
from tests.support.helpers import join

TYPICAL_BUDGET = 1200
WORST_BUDGET = 3000


def brief(store: Store, sid: str, agent: str, repo: Path) -> str:
    return briefing.briefing(store, join(store, sid, agent, repo))


def test_alone_the_briefing_is_one_line_with_the_handle_task_and_tools(store: Store, repo: Path):
    text = brief(store, "solo", "claude", repo)
    me = store.get_session("solo")
    assert "\n" not in text
    assert f"you are {me.handle} on task #" in text and "proj@main" in text
    assert "Nobody else is here yet" in text and text.endswith(briefing.TOOLS_LINE)


def test_a_typical_lane_brief_names_people_claims_waiting_items_and_blockers(
    store: Store, repo: Path, clock
):
    for sid, agent in [("a", "claude"), ("b", "codex"), ("c", "claude")]:
        join(store, sid, agent, repo)
    b, c = store.get_session("b"), store.get_session("c")
    actions.claim(store, "b", ["src/api.py", "src/db/**"], note="schema work")
    actions.claim(store, "c", ["docs/guide.md"])
    clock.advance(90)
    join(store, "me", "codex", repo)
    me = store.get_session("me")
    question = actions.ask(store, "b", "Can you take the viewer?", to=me.handle)
    handoff = actions.hand_off(store, "c", "Docs are yours", to="any")
    blocker = actions.report_blocker(store, "a", "CI is red on main", waiting_on="ops")
    text = briefing.briefing(store, join(store, "me", "codex", repo))

    lines = text.splitlines()
    assert lines[0].startswith(f"colony-tasks: you are {me.handle} on task #")
    assert f"{b.handle} (codex, active" in text and f"{c.handle} (claude" in text
    assert f"{b.handle} holds src/api.py, src/db/**" in text
    assert f"{c.handle} holds docs/guide.md" in text
    assert f"answer_question(question_id={question.id}" in text
    assert f"accept_handoff(handoff_id={handoff.id})" in text
    assert f"Open blockers: #{blocker.id}" in text and "CI is red" in text
    assert lines[-1] == briefing.TOOLS_LINE
    assert len(text) <= TYPICAL_BUDGET, len(text)


def test_own_items_and_ended_sessions_are_not_in_the_briefing(store: Store, repo: Path):
    join(store, "gone", "claude", repo)
    actions.claim(store, "gone", ["src/old.py"])
    sessions.end_session(store, store.get_session("gone"))
    join(store, "me", "claude", repo)
    actions.ask(store, "me", "my own question?")
    text = brief(store, "me", "claude", repo)
    gone = store.get_session("gone")
    assert gone.handle not in text and "src/old.py" not in text
    assert "answer_question(" not in text


def test_a_crowded_lane_stays_within_the_worst_case_budget(store: Store, repo: Path, home: Path):
    home.mkdir()  # 30 broadcast questions in a row: more than the loop guard lets through
    (home / "settings.json").write_text('{"chains": {"loop_limit": 100}}')
    for i in range(30):
        sid = f"agent-{i}"
        join(store, sid, "claude" if i % 2 else "codex", repo)
        actions.claim(store, sid, [f"src/module_{i}/file_{j}.py" for j in range(10)])
        actions.ask(store, sid, f"question {i} " + "with a long body " * 20)
        actions.report_blocker(store, sid, f"blocker {i} " + "waiting " * 30)
    text = brief(store, "me", "claude", repo)
    assert len(text) <= WORST_BUDGET, len(text)
    assert "and 22 more" in text  # 30 others, 8 shown
    assert text.endswith(briefing.TOOLS_LINE)


def test_a_delta_is_nothing_when_nothing_is_new(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    join(store, "me", "codex", repo)
    me = store.get_session("me")
    first = briefing.delta(store, me, [actions.updates_since(store, me)])
    assert first is None
    actions.post(store, "a", "pushed the fix")
    second = briefing.delta(store, me, [actions.updates_since(store, me)])
    assert second is not None and "pushed the fix" in second
    assert briefing.delta(store, me, [actions.updates_since(store, me)]) is None
