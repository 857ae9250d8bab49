"""The agent lifecycle's use cases (:mod:`colony_tasks.usecases.events`): what each event records and
the data it returns. What the agent is then told is the renderer's
(:func:`colony_tasks.render.briefing.render`); a few checks below render a result to show the two
agree, the hook tests check the text end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colony_tasks.render import briefing
from colony_tasks.store import Store
from colony_tasks.usecases import actions, events
from colony_tasks.usecases.events import Event, ToolUse
from tests.support.gitutil import git, make_repo

pytestmark = pytest.mark.both_backends


def start(store: Store, repo: Path, sid: str, agent: str = "claude", source: str = "startup"):
    return events.session_start(store, Event(sid, agent, str(repo)), source)


def edit(path: Path) -> ToolUse:
    return ToolUse("Edit", "edit", (str(path),))


def kinds(store: Store, task_id: int) -> list[str]:
    return [o.kind for o in store.timeline(task_id, limit=100)]


def test_a_session_start_returns_the_briefings_subject_and_joins_the_lane_task(
    store: Store, repo: Path
):
    result = start(store, repo, "s1")
    assert result.joined is not None and not result.rebrief
    assert result.session == result.joined.session
    assert result.joined.new_participant and result.joined.lane.root == str(repo)
    assert [p.id for p in store.participants(result.joined.task.id)] == ["s1"]
    text, deny = briefing.render(store, result)
    assert deny is None and f"you are {result.session.handle} on task" in text


def test_after_compaction_a_known_session_gets_a_rebrief_with_what_is_new(store: Store, repo: Path):
    start(store, repo, "s1")
    other = start(store, repo, "s2", "codex").session
    actions.post(store, other, "The cache moves to redis.")
    result = start(store, repo, "s1", source="compact")
    assert result.rebrief and result.joined is not None
    news = [o.text for u in result.updates for o in u.items]
    assert "The cache moves to redis." in news
    # The re-brief advanced the cursor: the next prompt does not repeat it.
    again = events.prompt(store, Event("s1", "claude", str(repo)), "")
    assert [o.text for u in again.updates for o in u.items] == []


def test_a_subagent_start_names_the_parent_and_the_subagents_type(store: Store, repo: Path):
    parent = start(store, repo, "s1").session
    result = events.subagent_start(store, Event("s1", "claude", str(repo)), "Explore")
    assert (result.session.id, result.subagent) == (parent.id, "Explore")
    assert result.joined is None and result.updates == ()


def test_a_subagents_prompt_is_not_recorded_and_leaves_the_news_to_its_parent(
    store: Store, repo: Path
):
    me = start(store, repo, "s1").session
    other = start(store, repo, "s2", "codex").session
    actions.post(store, other, "schema frozen")
    inside = events.prompt(store, Event("s1", "claude", str(repo), None, "Explore a1b2"), "look")
    assert inside.session.id == me.id and inside.updates == ()
    assert "prompt" not in kinds(store, store.open_lane_task(me.lane_id).id)
    parent = events.prompt(store, Event("s1", "claude", str(repo)), "go on")
    assert [o.text for u in parent.updates for o in u.items] == ["schema frozen"]


def test_a_prompt_is_recorded_and_returns_the_news_since_the_last_turn(store: Store, repo: Path):
    me = start(store, repo, "s1").session
    other = start(store, repo, "s2", "codex").session
    actions.post(store, other, "schema frozen")
    result = events.prompt(store, Event("s1", "claude", str(repo)), "add the index")
    assert [(o.kind, o.text) for u in result.updates for o in u.items] == [
        ("note", "schema frozen")
    ]
    task_id = store.open_lane_task(me.lane_id).id
    assert kinds(store, task_id)[-1] == "prompt"


def test_a_prompt_returns_what_could_not_reach_its_recipient(store: Store, repo: Path):
    start(store, repo, "s1")
    other = start(store, repo, "s2", "codex").session
    actions.ask(store, "s1", "Are you done with api.py?", to=other.handle)
    events.session_end(store, Event("s2", "codex", str(repo)))
    result = events.prompt(store, Event("s1", "claude", str(repo)), "next")
    assert [(r["kind"], r["recipient_handle"]) for r in result.undeliverable] == [
        ("question", other.handle)
    ]


def test_before_an_edit_of_a_held_file_the_conflict_is_returned_not_denied(
    store: Store, repo: Path
):
    start(store, repo, "s1")
    holder = start(store, repo, "s2", "codex").session
    actions.claim(store, holder, ["api.py"], note="refactor")
    result = events.before_tool(store, Event("s1", "claude", str(repo)), edit(repo / "api.py"))
    [conflict] = result.conflicts
    assert conflict.path == "api.py" and [h.handle for h in conflict.live] == [holder.handle]
    assert not result.deny and not result.after


def test_block_mode_denies_the_edit_of_a_live_claim(
    store: Store, repo: Path, home: Path, monkeypatch: pytest.MonkeyPatch
):
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"claims": {"mode": "block"}}))
    start(store, repo, "s1")
    holder = start(store, repo, "s2", "codex").session
    actions.claim(store, holder, ["api.py"])
    result = events.before_tool(store, Event("s1", "claude", str(repo)), edit(repo / "api.py"))
    assert result.deny
    context, deny = briefing.render(store, result)
    assert context is None and deny is not None and briefing.DENIED in deny


def test_an_edit_nobody_holds_returns_nothing(store: Store, repo: Path):
    start(store, repo, "s1")
    result = events.before_tool(store, Event("s1", "claude", str(repo)), edit(repo / "new.py"))
    assert result == events.NOTHING


def test_a_read_of_a_held_file_returns_a_note_once_per_session_and_file(store: Store, repo: Path):
    start(store, repo, "s1")
    holder = start(store, repo, "s2", "codex").session
    actions.claim(store, holder, ["api.py"])
    actions.record_decision(store, holder, "api.py keeps the v1 routes until Friday")
    read = ToolUse("Read", "read", (str(repo / "api.py"),))
    first = events.before_tool(store, Event("s1", "claude", str(repo)), read)
    [note] = first.read_notes
    assert (note.path, note.holder["handle"]) == ("api.py", holder.handle)
    assert note.decision is not None and "v1 routes" in note.decision.text
    second = events.before_tool(store, Event("s1", "claude", str(repo)), read)
    assert second.read_notes == ()


def test_after_an_edit_it_is_recorded_claimed_and_its_collision_returned(store: Store, repo: Path):
    me = start(store, repo, "s1").session
    holder = start(store, repo, "s2", "codex").session
    actions.claim(store, holder, ["api.py"])
    actions.ask(store, holder, "Which port does the api use?", to=me.handle)
    result = events.after_tool(store, Event("s1", "claude", str(repo)), edit(repo / "api.py"))
    assert result.after and [c.path for c in result.conflicts] == ["api.py"]
    assert [o.text for o in result.delivered] == ["Which port does the api use?"]
    mine = [c["pattern"] for c in store.list_claims(session_id=me.id)]
    assert mine == ["api.py"]
    task_id = store.open_lane_task(me.lane_id).id
    assert "edit" in kinds(store, task_id)
    # Delivered once: the next tool call does not repeat it.
    later = events.after_tool(store, Event("s1", "claude", str(repo)), edit(repo / "b.py"))
    assert later.delivered == ()


def test_two_clones_of_one_origin_on_one_machine_share_their_lane(store: Store, tmp_path: Path):
    seed = make_repo(tmp_path / "seed")
    for name in ("a", "b"):
        git(tmp_path, "clone", "-q", str(seed), str(tmp_path / name))
        git(tmp_path / name, "remote", "set-url", "origin", "https://github.com/org/proj.git")
    a = start(store, tmp_path / "a", "s1").session
    b = start(store, tmp_path / "b", "s2", "codex").session
    assert a.lane_id == b.lane_id
    first = ToolUse(
        "Edit",
        "edit",
        (str(tmp_path / "a/README.md"),),
        edits=(("replace", str(tmp_path / "a/README.md"), "hello", "hi"),),
    )
    events.before_tool(store, Event("s1", "claude", str(tmp_path / "a")), first)
    (tmp_path / "a/README.md").write_text("hi\n")
    events.after_tool(store, Event("s1", "claude", str(tmp_path / "a")), first)
    second = ToolUse(
        "Edit",
        "edit",
        (str(tmp_path / "b/README.md"),),
        edits=(("replace", str(tmp_path / "b/README.md"), "hello", "hey"),),
    )
    seen = events.before_tool(store, Event("s2", "codex", str(tmp_path / "b")), second)
    assert [(o.path, o.handle) for o in seen.overlaps] == [("README.md", a.handle)]


def test_a_failed_edit_records_nothing(store: Store, repo: Path):
    me = start(store, repo, "s1").session
    failed = events.after_tool(
        store, Event("s1", "claude", str(repo)), edit(repo / "api.py"), failed=True
    )
    assert failed.conflicts == () and store.list_claims(session_id=me.id) == []


def test_a_stop_failure_marks_the_session_cut_off_and_tells_the_lane(store: Store, repo: Path):
    me = start(store, repo, "s1").session
    assert events.stop_failure(store, Event("s1", "claude", str(repo)), "rate_limit") == (
        events.NOTHING
    )
    assert store.get_session(me.id).waiting.endswith("rate_limit")
    task_id = store.open_lane_task(me.lane_id).id
    assert kinds(store, task_id)[-1] == "note"


def test_an_idle_notification_marks_the_session_waiting_on_its_human(store: Store, repo: Path):
    me = start(store, repo, "s1").session
    events.notification(store, Event("s1", "claude", str(repo)), "auth_success")
    assert store.get_session(me.id).waiting == ""
    events.notification(store, Event("s1", "claude", str(repo)), "idle_prompt")
    assert store.get_session(me.id).waiting != ""


def test_a_session_end_ends_it_and_releases_its_claims(store: Store, repo: Path):
    me = start(store, repo, "s1").session
    actions.claim(store, me, ["api.py"])
    events.session_end(store, Event("s1", "claude", str(repo)))
    assert store.get_session(me.id).ended_at is not None
    assert store.list_claims(session_id=me.id) == []


def test_every_agent_event_is_installed_and_has_its_use_case():
    from colony_tasks.base.agent_events import AGENT_EVENTS
    from colony_tasks.install import hookblock

    assert {e.slug for e in hookblock.EVENTS} == set(AGENT_EVENTS) == set(events.EVENTS)
    assert {e.name for e in hookblock.EVENTS} == set(AGENT_EVENTS.values())
    assert set(events.EVENTS) > events.QUIET
