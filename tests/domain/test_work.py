"""Plans: work items with dependencies, taken atomically, through the core and every front end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client
from starlette.testclient import TestClient

from colony_tasks.base.errors import Conflict, InvalidInput, NotAllowed
from colony_tasks.cli import cli
from colony_tasks.domain import chains, delivery, sessions
from colony_tasks.install import doctor
from colony_tasks.mcp_server.server import build_server
from colony_tasks.render import briefing
from colony_tasks.store import Store, open_default
from colony_tasks.usecases import actions, events
from colony_tasks.viewer import create_app
from tests.support import ROOT, TESTS
from tests.support.helpers import join, snapshot

# One set of tests, two stores: SQLite and a real PostgreSQL server (tests/conftest.py).
pytestmark = pytest.mark.both_backends

TOKEN = "plan-token-0123456789"
DIAMOND = [
    {"title": "schema", "files": ["db/**"]},
    {"title": "api", "files": ["src/api/**"], "depends_on": [0]},
    {"title": "worker", "files": ["src/worker/**"], "depends_on": [0]},
    {"title": "viewer", "files": ["src/viewer/**"], "depends_on": [1, 2]},
    {"title": "docs", "depends_on": [3]},
]


@pytest.fixture
def lane(store: Store, repo: Path):
    a = join(store, "sess-a", "claude", repo)
    b = join(store, "sess-b", "codex", repo)
    return {"a": a.session, "b": b.session, "task_id": a.task.id, "repo": repo}


def ready(store: Store, task_id: int) -> list[str]:
    board = actions.plan_show(store, task_id)
    return [i.title for i in board.items if i.id in board.ready]


def work_lines(store: Store, session) -> list[str]:
    found = delivery.updates_since(store, session)
    return [o.text for o in found.items if o.kind == "work"]


# -- planning -------------------------------------------------------------------------------


def test_a_diamond_becomes_ready_in_dependency_order(store: Store, lane):
    planned = actions.plan_work(store, lane["a"], DIAMOND)
    schema, api, worker, viewer, docs = planned.ids
    assert planned.ready == [schema]
    assert ready(store, lane["task_id"]) == ["schema"]
    actions.take_work(store, lane["a"], schema)
    assert ready(store, lane["task_id"]) == []
    actions.finish_work(store, lane["a"], schema, "tables in")
    assert ready(store, lane["task_id"]) == ["api", "worker"]
    actions.take_work(store, lane["a"], api)
    actions.finish_work(store, lane["a"], api, "endpoints")
    assert ready(store, lane["task_id"]) == ["worker"]  # viewer still waits on worker
    taken = actions.take_work(store, lane["b"])
    assert taken.item.id == worker
    done = actions.finish_work(store, lane["b"], worker, "jobs")
    assert [i.id for i in done.ready] == [viewer]
    actions.take_work(store, lane["b"], viewer)
    actions.finish_work(store, lane["b"], viewer, "board", state="dropped")
    assert ready(store, lane["task_id"]) == ["docs"]  # a dropped item holds nothing up


def test_an_item_that_is_not_ready_cannot_be_taken(store: Store, lane):
    ids = actions.plan_work(store, lane["a"], DIAMOND).ids
    with pytest.raises(
        Conflict, match=r"Item #4 is not ready: it waits on #2 api \(open\), #3 worker"
    ):
        actions.take_work(store, lane["b"], ids[3])


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([{"title": "a", "depends_on": [1]}, {"title": "b", "depends_on": [0]}], "form a cycle"),
        ([{"title": "a", "depends_on": [0]}], "form a cycle"),
        ([{"title": "a", "depends_on": ["#999"]}], "has no work item #999"),
        ([{"title": "a", "depends_on": [5]}], "depends on index 5"),
        ([{"title": "a", "depends_on": ["api"]}], "has dependency 'api'"),
        ([{"title": ""}], "title of item 0 must be non-empty"),
        ([{"title": "a", "files": ["/etc/passwd"]}], "outside the repository"),
    ],
)
def test_cycles_unknown_dependencies_and_bad_items_are_refused_and_change_nothing(
    store: Store, lane, items, message
):
    actions.plan_work(store, lane["a"], [{"title": "existing"}])
    before = snapshot(store)
    with pytest.raises(InvalidInput, match=message):
        actions.plan_work(store, lane["a"], items)
    assert snapshot(store) == before


def test_a_plan_on_a_chain_is_the_coordinators(store: Store, lane):
    chain = chains.create(store, lane["a"], "review")
    chains.add(store, lane["a"], chain.id, lane["b"].handle, "your turn")
    with pytest.raises(NotAllowed, match="Only the coordinator of chain"):
        actions.plan_work(store, lane["b"], [{"title": "x"}], task_id=chain.id)
    chains.pass_turn(store, lane["a"], chain.id, lane["a"].handle, "mine again")
    assert actions.plan_work(store, lane["a"], [{"title": "x"}], task_id=chain.id).ids


# -- taking and finishing -------------------------------------------------------------------


def test_taking_claims_the_files_and_finishing_releases_them(store: Store, lane):
    ids = actions.plan_work(store, lane["a"], DIAMOND).ids
    actions.claim(store, lane["a"], ["db/schema.sql"])
    taken = actions.take_work(store, lane["b"])
    assert [c["pattern"] for c in taken.granted] == ["db/**"]
    assert [(c.path, [h.handle for h in c.claims]) for c in taken.conflicts] == []
    # The owner's claim makes editing its files a conflict for others, as any claim does.
    found = actions.claim(store, lane["a"], ["db/tables.sql"]).conflicts
    assert [h.handle for h in found[0].claims] == [lane["b"].handle]
    assert "work #" in found[0].claims[0].note
    done = actions.finish_work(store, lane["b"], ids[0], "tables in")
    assert done.released == ["db/**"]
    assert not [c for c in store.list_claims(session_id="sess-b")]


def test_taking_reports_files_someone_else_already_holds(store: Store, lane):
    actions.plan_work(store, lane["a"], DIAMOND)
    actions.claim(store, lane["a"], ["db/**"])
    taken = actions.take_work(store, lane["b"])
    assert [h.handle for c in taken.conflicts for h in c.claims] == [lane["a"].handle]


def test_finishing_announces_newly_ready_items_once_in_each_participants_delta(
    store: Store, lane, repo: Path
):
    c = join(store, "sess-c", "claude", repo).session
    ids = actions.plan_work(store, lane["a"], DIAMOND).ids
    actions.take_work(store, lane["b"], ids[0])
    for who in ("sess-a", "sess-b", "sess-c"):
        delivery.updates_since(store, store.get_session(who))  # catch up
    actions.finish_work(store, lane["b"], ids[0], "tables in")
    for who in (lane["a"], c):
        lines = work_lines(store, who)
        assert len(lines) == 1
        assert f"take_work(item_id={ids[1]})" in lines[0] and "tables in" in lines[0]
        assert work_lines(store, who) == []  # once
    assert work_lines(store, lane["b"]) == []  # not its own news


def test_a_session_that_asked_for_work_is_told_directly_when_some_is_ready(store: Store, lane):
    ids = actions.plan_work(store, lane["a"], DIAMOND).ids
    actions.take_work(store, lane["b"], ids[0])
    waiting = actions.take_work(store, lane["a"])
    assert waiting.item is None and "You will be told" in waiting.message
    delivery.updates_since(store, lane["a"])  # catch up
    actions.finish_work(store, lane["b"], ids[0], "tables in")
    mid_turn = delivery.deliver_directed(store, lane["a"])
    assert [o.kind for o in mid_turn] == ["work"] and mid_turn[0].to == lane["a"].handle
    assert work_lines(store, lane["a"]) == []  # not repeated at the next prompt


def test_a_non_owner_cannot_finish_someone_elses_item(store: Store, lane):
    ids = actions.plan_work(store, lane["a"], DIAMOND).ids
    actions.take_work(store, lane["b"], ids[0])
    before = snapshot(store)
    with pytest.raises(NotAllowed, match="only its owner or a human can finish it"):
        actions.finish_work(store, lane["a"], ids[0], "done by me")
    assert snapshot(store) == before
    with pytest.raises(Conflict, match="is taken by codex-"):
        actions.take_work(store, lane["a"], ids[0])


def test_a_blocked_item_needs_a_reason_and_keeps_its_dependents_waiting(store: Store, lane):
    ids = actions.plan_work(store, lane["a"], DIAMOND).ids
    actions.take_work(store, lane["b"], ids[0])
    with pytest.raises(InvalidInput, match="needs a reason"):
        actions.finish_work(store, lane["b"], ids[0], "stuck", state="blocked")
    done = actions.finish_work(store, lane["b"], ids[0], "stuck", state="blocked", reason="DBA")
    assert done.item.state == "blocked" and done.ready == []
    assert actions.take_work(store, lane["a"], ids[0]).item.state == "taken"  # unblocks it


def test_a_human_reassigns_a_stale_item_and_its_claims_move(store: Store, lane, clock):
    ids = actions.plan_work(store, lane["a"], DIAMOND).ids
    actions.take_work(store, lane["b"], ids[0])
    clock.advance(45 * 60)
    store.refresh_session("sess-a")
    assert actions.plan_show(store, lane["task_id"]).stale == [ids[0]]
    assert "- Stale (owner ended, quiet 30m+ or cut off): #1 schema (codex-" in briefing.briefing(
        store, join(store, "sess-a", "claude", lane["repo"])
    )
    failed = [c for c in doctor.diagnose(store) if c["check"] == "work"][0]
    assert not failed["ok"] and "plan reassign" in failed["detail"]
    with pytest.raises(NotAllowed, match="Only a human or the planner"):
        actions.reassign_work(
            store, join(store, "sess-x", "codex", lane["repo"]).session, ids[0], "sess-a"
        )
    alice = sessions.human_session(store, "alice", str(lane["repo"]))
    moved = actions.reassign_work(store, alice, ids[0], lane["a"].handle)
    assert moved.owner == "sess-a"
    assert [c["pattern"] for c in store.list_claims(session_id="sess-a")] == ["db/**"]
    assert store.list_claims(session_id="sess-b") == []
    assert actions.plan_show(store, lane["task_id"]).stale == []


def test_the_planner_reopens_an_item_and_a_human_drops_one(store: Store, lane):
    ids = actions.plan_work(store, lane["a"], DIAMOND).ids
    actions.take_work(store, lane["b"], ids[0])
    reopened = actions.reassign_work(store, lane["a"], ids[0], None)
    assert (reopened.state, reopened.owner) == ("open", None)
    alice = sessions.human_session(store, "alice", str(lane["repo"]))
    dropped = actions.drop_work(store, alice, ids[4], "not needed")
    assert dropped.item.state == "dropped"


# -- briefing -------------------------------------------------------------------------------


def test_the_briefing_of_a_ten_item_plan_names_what_you_own_and_the_exact_call(
    store: Store, lane, repo: Path
):
    items = [
        {"title": f"part {n} of the migration", "files": [f"src/part{n}/**"]} for n in range(10)
    ]
    ids = actions.plan_work(store, lane["a"], items).ids
    actions.take_work(store, lane["a"], ids[0])
    actions.take_work(store, lane["b"], ids[1])
    joined = join(store, "sess-a", "claude", repo)
    text = briefing.briefing(store, joined)
    assert f"- You own #{ids[0]} part 0 of the migration (src/part0/**)" in text
    assert f"take_work(item_id={ids[2]})" in text
    assert f"{lane['b'].handle} on #{ids[1]}" in text
    assert "Plan (8 open, 2 taken):" in text
    assert len(text) <= 1200, len(text)


def test_the_prompt_hook_delivers_plan_progress_to_others(store: Store, lane, repo: Path):
    ids = actions.plan_work(store, lane["a"], DIAMOND).ids
    event = events.Event("sess-b", "codex", str(repo))
    events.prompt(store, event, "go")
    actions.take_work(store, lane["a"], ids[0])
    result = events.prompt(store, event, "next")
    news = [o for u in result.updates for o in u.items]
    assert [(o.kind, o.handle) for o in news] == [("work", lane["a"].handle)]
    shown, _ = briefing.render(store, result)
    assert f"{lane['a'].handle} plan (just now): took #{ids[0]} schema (owns db/**)" in shown


# -- concurrency ----------------------------------------------------------------------------


@pytest.mark.stress
def test_ten_concurrent_takers_from_five_sessions_get_each_ready_item_exactly_once(
    home: Path, repo: Path
):
    store = open_default()
    try:
        for n in range(5):
            join(store, f"sess-{n}", "claude" if n % 2 else "codex", repo)
        task_id = store.open_lane_task(store.get_session("sess-0").lane_id).id
        plan = [{"title": f"ready {n}", "files": [f"src/r{n}.py"]} for n in range(5)]
        plan.append({"title": "after all", "depends_on": [0, 1, 2, 3, 4]})
        actions.plan_work(store, "sess-0", plan, task_id=task_id)
    finally:
        store.close()
    helper = str(TESTS / "support" / "stress_taker.py")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, helper],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        for _ in range(10)
    ]
    jobs = [json.dumps({"session": f"sess-{n % 5}", "task_id": task_id}) for n in range(10)]
    for proc, job in zip(procs, jobs, strict=True):
        assert proc.stdin is not None
        proc.stdin.write(job.encode())
    for proc in procs:  # release them together: each blocks on stdin until it closes
        assert proc.stdin is not None
        proc.stdin.close()
    got = []
    for proc in procs:
        assert proc.stdout is not None
        got.append(json.loads(proc.stdout.read())["item"])
        proc.wait(timeout=120)
    assert all(proc.returncode == 0 for proc in procs)
    taken = [i for i in got if i is not None]
    assert sorted(taken) == [1, 2, 3, 4, 5] and got.count(None) == 5
    store = open_default()
    try:
        owners = [i.owner for i in store.work_items(task_id, states=("taken",))]
        assert len(owners) == 5
        claims = store.list_claims()
        assert sorted(c["pattern"] for c in claims) == [f"src/r{n}.py" for n in range(5)]
    finally:
        store.close()


# -- front ends -----------------------------------------------------------------------------


def test_the_cli_adds_takes_shows_and_finishes_items(home: Path, repo: Path, monkeypatch):
    monkeypatch.chdir(repo)
    runner = CliRunner()
    added = runner.invoke(cli, ["plan", "add", "schema", "--files", "db/**", "--as", "alice"])
    assert added.exit_code == 0, added.output
    assert "Added item #1 to task" in added.output and "ready to take" in added.output
    runner.invoke(cli, ["plan", "add", "api", "--after", "1", "--as", "alice"])
    bad = runner.invoke(cli, ["plan", "add", "x", "--after", "9", "--as", "alice"])
    assert bad.exit_code == 1 and "has no work item #9" in bad.output
    took = runner.invoke(cli, ["plan", "take", "--as", "bob"])
    assert "You took #1 schema [taken] (bob)." in took.output and "Claimed: db/**" in took.output
    shown = runner.invoke(cli, ["plan"])
    assert "#1    schema" in shown.output and "#2    api     open" in shown.output
    not_mine = runner.invoke(cli, ["plan", "done", "2", "x", "--as", "bob"])
    assert "only a taken item is finished" in not_mine.output
    done = runner.invoke(cli, ["plan", "done", "1", "tables in", "--as", "bob"])
    assert "Item #1 is done. Ready now: #2 api [open]." in done.output
    data = json.loads(runner.invoke(cli, ["plan", "show", "--json"]).output)
    assert data["ready"] == [2] and data["counts"]["done"] == 1
    dropped = runner.invoke(cli, ["plan", "drop", "2", "--as", "alice"])
    assert "Dropped item #2." in dropped.output


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_mcp_tools_plan_take_and_finish(home: Path, repo: Path, anyio_backend):
    store = open_default()
    a = join(store, "sess-a", "claude", repo).session
    b = join(store, "sess-b", "codex", repo).session
    for session in (a, b):  # recorded under the in-memory server's agent: the caller's own
        store.refresh_session(session.id, agent_pid=os.getppid())
    server = build_server(open_default, background=False)
    try:
        async with Client(server) as client:

            async def call(name: str, **args):
                result = await client.call_tool(name, args)
                return result.is_error, json.loads(
                    result.content[0].text
                ) if not result.is_error else result.content[0].text

            err, planned = await call("plan_work", items=DIAMOND[:3], session_id=a.handle)
            assert not err and planned["ready"] == planned["ids"][:1]
            err, cycle = await call(
                "plan_work",
                items=[{"title": "x", "depends_on": [0]}],
                session_id=a.handle,
            )
            assert err and "form a cycle" in cycle
            err, taken = await call("take_work", session_id=b.handle)
            assert taken["item"]["title"] == "schema" and taken["claims"][0]["pattern"] == "db/**"
            err, nothing = await call("take_work", session_id=a.handle)
            assert "You will be told" in nothing["message"]
            err, refused = await call(
                "finish_work", item_id=taken["item"]["id"], summary="x", session_id=a.handle
            )
            assert err and "only its owner or a human" in refused
            err, finished = await call(
                "finish_work", item_id=taken["item"]["id"], summary="tables", session_id=b.handle
            )
            assert finished["released"] == ["db/**"] and finished["ready"] == planned["ids"][1:]
            listed = await client.call_tool("task_list", {"session_id": a.handle})
            plan = listed.structured_content["tasks"][0]["plan"]
            assert plan == {"open": 2, "done": 1}
    finally:
        store.close()


def test_the_viewer_shows_the_board_and_a_human_adds_reassigns_and_drops(store: Store, lane):
    ids = actions.plan_work(store, lane["a"], DIAMOND).ids
    actions.take_work(store, lane["b"], ids[0])
    app = create_app(store, TOKEN, human_name="alice", cwd=str(lane["repo"]))
    with TestClient(app, base_url=f"http://testserver/{TOKEN}/") as client:
        page = client.get(f"/tasks/{lane['task_id']}?token={TOKEN}")
        assert 'id="plan"' in page.text and "#5</span> docs" in page.text
        assert f'action="/{TOKEN}/tasks/' in page.text and "Add item" in page.text
        board = client.get(f"/api/tasks/{lane['task_id']}/plan").json()
        assert [i["id"] for i in board["columns"]["taken"]] == [ids[0]]
        before = snapshot(store)
        denied = client.post(f"/tasks/{lane['task_id']}/plan", data={"action": "drop", "item": "2"})
        assert denied.status_code == 403 and snapshot(store) == before
        added = client.post(
            f"/tasks/{lane['task_id']}/plan",
            data={"token": TOKEN, "action": "add", "title": "release", "after": "5", "files": ""},
            follow_redirects=False,
        )
        assert added.status_code == 303
        moved = client.post(
            f"/api/tasks/{lane['task_id']}/plan",
            json={"action": "reassign", "item": ids[0], "to": lane["a"].handle},
            headers={"X-Colony-Token": TOKEN},
        )
        assert moved.status_code == 201
        assert store.work_item(ids[0]).owner == "sess-a"
        dropped = client.post(
            f"/api/tasks/{lane['task_id']}/plan",
            json={"action": "drop", "item": ids[4]},
            headers={"X-Colony-Token": TOKEN},
        )
        assert dropped.status_code == 201 and store.work_item(ids[4]).state == "dropped"
        wrong = client.post(
            f"/api/tasks/{lane['task_id']}/plan",
            json={"action": "drop", "item": 999},
            headers={"X-Colony-Token": TOKEN},
        )
        assert wrong.status_code == 404 and "no work item #999" in wrong.json()["error"]
    titles = [i.title for i in store.work_items(lane["task_id"])]
    assert titles[-1] == "release"


def test_editing_a_file_of_another_sessions_taken_item_warns_before_the_edit(
    store: Store, lane, repo: Path
):
    actions.plan_work(store, lane["a"], DIAMOND)
    actions.take_work(store, lane["b"])
    tool = events.ToolUse("Edit", "edit", (str(repo / "db" / "schema.sql"),))
    result = events.before_tool(store, events.Event("sess-a", "claude", str(repo)), tool)
    [conflict] = result.conflicts
    assert (conflict.path, [h.handle for h in conflict.live]) == (
        "db/schema.sql",
        [lane["b"].handle],
    )
    warning, deny = briefing.render(store, result)
    assert deny is None and f"db/schema.sql is held by {lane['b'].handle}" in warning
    assert "work #1: schema" in warning


def test_on_a_chain_taking_work_is_a_post_and_needs_the_turn(store: Store, lane):
    chain = chains.create(store, lane["a"], "review")
    actions.plan_work(store, lane["a"], [{"title": "x"}], task_id=chain.id)
    chains.add(store, lane["a"], chain.id, lane["b"].handle, "take the item")
    assert actions.take_work(store, lane["b"], task_id=chain.id).item.title == "x"
    with pytest.raises(NotAllowed, match="only the turn holder may post"):
        actions.take_work(store, lane["b"], task_id=chain.id)


def test_taking_your_own_item_again_renews_its_claims_without_a_second_announcement(
    store: Store, lane
):
    ids = actions.plan_work(store, lane["a"], DIAMOND).ids
    actions.take_work(store, lane["b"], ids[0])
    delivery.updates_since(store, lane["a"])
    again = actions.take_work(store, lane["b"], ids[0])
    assert again.item.owner == "sess-b" and [c["pattern"] for c in again.granted] == ["db/**"]
    assert work_lines(store, lane["a"]) == []


def test_plan_texts_are_redacted_before_they_are_stored(store: Store, lane):
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    ids = actions.plan_work(
        store,
        lane["a"],
        [{"title": f"rotate {secret}", "description": "uses <private>hunter2</private> here"}],
    ).ids
    actions.take_work(store, lane["b"], ids[0])
    actions.finish_work(store, lane["b"], ids[0], f"done with {secret}")
    dump = repr(snapshot(store))
    assert secret not in dump and "hunter2" not in dump
