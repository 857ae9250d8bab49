"""The MCP tools through the SDK's in-memory client (legacy handshake, JSON-RPC streams)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from colony_tasks.base.models import Session
from colony_tasks.cli import cli
from colony_tasks.domain import identity, sessions
from colony_tasks.mcp_server.server import build_server
from colony_tasks.store import Store, open_default
from colony_tasks.usecases import actions
from tests.support.helpers import snapshot

pytestmark = pytest.mark.anyio

TOOL_NAMES = {
    "task_list",
    "task_timeline",
    "task_updates_since",
    "task_post",
    "claim_file",
    "release_file",
    "ask_question",
    "answer_question",
    "hand_off",
    "accept_handoff",
    "record_decision",
    "report_blocker",
    "resolve_blocker",
    "withdraw",
    "search",
    "get_observations",
    "chain_create",
    "chain_pass",
    "chain_say",
    "chain_close",
    "plan_work",
    "take_work",
    "finish_work",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# The in-memory server's ancestors start at pytest's parent: sessions recorded under it are
# the caller's own, so these tests may pass any of them as session_id (tests/crosslayer/test_identity.py
# covers sessions of other processes).
AGENT = os.getppid()


class Lane:
    """Two agent sessions (and a third, late one) on one lane, in the server's own store."""

    def __init__(self, store: Store, repo: Path) -> None:
        self.store = store
        self.repo = repo
        self.a = self.register("sess-a", "claude")
        self.b = self.register("sess-b", "codex")
        self.task_id = store.open_lane_task(self.a.lane_id).id

    def register(self, session_id: str, agent: str) -> Session:
        return sessions.register(
            self.store, session_id, agent=agent, cwd=str(self.repo), agent_pid=AGENT
        ).session

    def disown(self) -> None:
        """Record the sessions under another process: this server no longer detects them."""
        self.store.conn.execute("UPDATE sessions SET agent_pid = 1")

    def credential(self, session: Session | None = None) -> str:
        return identity.credential(self.store, session or self.b) or ""

    def third(self) -> Session:
        return self.register("sess-c", "claude")


@pytest.fixture
def lane(home: Path, repo: Path) -> Iterator[Lane]:
    store = open_default()
    yield Lane(store, repo)
    store.close()


@asynccontextmanager
async def connected(**kwargs: Any) -> AsyncIterator[Client]:
    kwargs.setdefault("background", False)  # deterministic store contents; tested on its own
    async with Client(build_server(**kwargs), mode="legacy") as client:
        yield client


async def ok(client: Client, name: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def error(client: Client, name: str, **args: Any) -> str:
    result = await client.call_tool(name, args)
    assert result.is_error, result.content[0].text
    return result.content[0].text


# -- the two-session flow -------------------------------------------------------------------------


async def test_claiming_a_held_file_is_granted_and_names_the_holder(lane: Lane):
    async with connected() as client:
        mine = await ok(client, "claim_file", paths=["src/app.py"], session_id=lane.a.handle)
        theirs = await ok(client, "claim_file", paths=["src/app.py"], session_id=lane.b.handle)

    assert mine["holder"] == lane.a.handle and mine["conflicts"] == []
    assert [c["pattern"] for c in mine["granted"]] == ["src/app.py"]
    assert [c["pattern"] for c in theirs["granted"]] == ["src/app.py"]
    assert theirs["conflicts"] == [
        {
            "path": "src/app.py",
            "by": lane.a.handle,
            "claim": "src/app.py",
            "until": theirs["conflicts"][0]["until"],
        }
    ]


async def test_a_directed_question_is_answered_by_its_addressee(lane: Lane):
    async with connected() as client:
        asked = await ok(
            client, "ask_question", question="Which port?", to=lane.b.handle, session_id=lane.a.id
        )
        answered = await ok(
            client,
            "answer_question",
            question_id=asked["id"],
            answer="8080",
            session_id=lane.b.handle,
        )
        timeline = await ok(client, "task_timeline", session_id=lane.a.handle)

    assert asked["to"] == lane.b.handle and asked["delivery"] == {lane.b.handle: "pending"}
    assert answered["ok"] is True and answered["answered_by"] == lane.b.handle
    by_id = {i["id"]: i for i in timeline["items"]}
    assert by_id[asked["id"]]["status"] == "answered"
    assert by_id[answered["answer_id"]]["in_reply_to"] == asked["id"]


async def test_a_broadcast_question_is_answered_once_and_a_late_answer_becomes_a_note(lane: Lane):
    late = lane.third()
    async with connected() as client:
        asked = await ok(client, "ask_question", question="Who owns CI?", session_id=lane.a.handle)
        first = await ok(
            client,
            "task_post",
            content="I do.",
            kind="answer",
            in_reply_to=asked["id"],
            session_id=lane.b.handle,
        )
        second = await ok(
            client, "answer_question", question_id=asked["id"], answer="Me!", session_id=late.handle
        )

    assert asked["delivery"] == {lane.b.handle: "pending", late.handle: "pending"}
    assert first["ok"] is True and first["kind"] == "answer" and first["to"] == lane.a.handle
    assert second["ok"] is False and second["answered_by"] == lane.b.handle
    assert f"already answered by {lane.b.handle}" in second["message"]
    assert lane.store.get_observation(second["note_id"]).kind == "note"


async def test_accepting_a_handoff_moves_the_files_claims_to_the_acceptor(lane: Lane):
    async with connected() as client:
        await ok(client, "claim_file", paths=["src/app.py", "docs/*.md"], session_id=lane.a.handle)
        handoff = await ok(
            client,
            "hand_off",
            summary="Take over the app module.",
            to=lane.b.handle,
            files=["src/app.py"],
            session_id=lane.a.handle,
        )
        accepted = await ok(
            client, "accept_handoff", handoff_id=handoff["id"], session_id=lane.b.handle
        )

    assert handoff["kind"] == "handoff"
    assert accepted["handoff_id"] == handoff["id"]
    assert [c["pattern"] for c in accepted["claims"]] == ["src/app.py"]
    held = {(c["handle"], c["pattern"]) for c in lane.store.list_claims()}
    assert held == {(lane.b.handle, "src/app.py"), (lane.a.handle, "docs/*.md")}


async def test_decisions_and_blockers_appear_in_the_timeline(lane: Lane):
    async with connected() as client:
        decided = await ok(
            client,
            "record_decision",
            decision="Use SQLite WAL.",
            rationale="Readers never block the writer.",
            session_id=lane.a.handle,
        )
        blocked = await ok(
            client,
            "report_blocker",
            blocker="CI is red on main.",
            waiting_on=lane.b.handle,
            session_id=lane.a.handle,
        )
        timeline = await ok(client, "task_timeline", task_id=lane.task_id)

    items = {i["id"]: i for i in timeline["items"]}
    assert items[decided["id"]]["kind"] == "decision"
    assert "Rationale: Readers never block the writer." in items[decided["id"]]["text"]
    assert items[blocked["id"]]["kind"] == "blocker"
    assert items[blocked["id"]]["status"] == "open"
    assert [i["id"] for i in timeline["items"]] == sorted(items)


async def test_updates_since_delivers_each_item_once(lane: Lane):
    async with connected() as client:
        first = await ok(client, "task_post", content="one", session_id=lane.a.handle)
        await ok(client, "record_decision", decision="two", session_id=lane.a.handle)
        got = await ok(client, "task_updates_since", session_id=lane.b.handle)
        again = await ok(client, "task_updates_since", session_id=lane.b.handle)
        third = await ok(client, "task_post", content="three", session_id=lane.a.handle)
        later = await ok(client, "task_updates_since", session_id=lane.b.handle)
        peek = await ok(
            client, "task_updates_since", since_id=first["id"], session_id=lane.b.handle
        )
        own = await ok(client, "task_updates_since", session_id=lane.a.handle)

    assert [i["text"] for i in got["items"]] == ["one", "two"] and got["remaining"] == 0
    assert again["items"] == []
    assert [i["id"] for i in later["items"]] == [third["id"]]
    assert [i["text"] for i in peek["items"]] == ["two", "three"]
    assert own["items"] == []


async def test_a_post_reports_delivery_state_per_recipient(lane: Lane):
    async with connected() as client:
        broadcast = await ok(client, "task_post", content="hello all", session_id=lane.a.handle)
        directed = await ok(
            client, "task_post", content="psst", to="codex", urgent=True, session_id=lane.a.handle
        )

    assert broadcast["delivery"] == {lane.b.handle: "pending"} and "to" not in broadcast
    assert directed["to"] == "codex" and directed["delivery"] == {lane.b.handle: "pending"}
    assert broadcast["author"] == lane.a.handle


async def test_release_file_releases_every_claim_by_default(lane: Lane):
    async with connected() as client:
        await ok(client, "claim_file", paths=["a.py", "b.py", "c.py"], session_id=lane.a.handle)
        some = await ok(client, "release_file", paths=["a.py"], session_id=lane.a.handle)
        rest = await ok(client, "release_file", session_id=lane.a.handle)

    assert some["released"] == ["a.py"]
    assert sorted(rest["released"]) == ["b.py", "c.py"]
    assert lane.store.list_claims(session_id=lane.a.id) == []


async def test_task_list_shows_lanes_participants_and_last_activity(lane: Lane):
    async with connected() as client:
        await ok(client, "task_post", content="hi", session_id=lane.a.handle)
        lane.disown()  # no session of this process: the call is anonymous
        anonymous = await ok(client, "task_list")
        mine = await ok(client, "task_list", status="all", session_id=lane.credential())

    (task,) = anonymous["tasks"]
    assert task["id"] == lane.task_id and task["lane"] == "proj@main"
    assert task["root"] == os.path.realpath(lane.repo)
    assert task["participants"] == [lane.a.handle, lane.b.handle]
    assert task["last_activity"] and "joined" not in task
    assert mine["tasks"][0]["joined"] is True


async def test_search_finds_posts_and_get_observations_returns_them_in_full(lane: Lane):
    long_text = "The retry budget is three attempts. " + "Details follow. " * 40
    async with connected() as client:
        posted = await ok(client, "task_post", content=long_text, session_id=lane.a.handle)
        found = await ok(client, "search", query="retry budget", kinds=["note"])
        nothing = await ok(client, "search", query="retry budget", kinds=["decision"])
        timeline = await ok(client, "task_timeline", session_id=lane.a.handle)
        full = await ok(client, "get_observations", ids=[posted["id"], posted["id"], 999_999])

    assert [h["id"] for h in found["hits"]] == [posted["id"]]
    assert found["hits"][0]["author"] == lane.a.handle and "retry" in found["hits"][0]["snippet"]
    assert nothing["hits"] == []
    assert timeline["items"][-1]["text"].endswith("…")
    assert [r["text"] for r in full["items"]] == [long_text.strip()]
    assert full["items"][0]["session_id"] == lane.a.id and full["missing"] == [999_999]


async def test_a_search_hit_says_what_and_where_and_its_next_call_shows_the_context(
    lane: Lane,
):
    from colony_tasks.usecases import records

    before = actions.post(lane.store, lane.a, "first we tried a fixed delay between retries")
    decided = actions.post(lane.store, lane.b, "Decision: retries back off exponentially")
    after = actions.post(lane.store, lane.a, "agreed, and cap the backoff at 30 s")
    edit = records.record_edit(lane.store, lane.a, ["src/net/retry.py"], tool="Edit")
    async with connected() as client:
        found = await ok(
            client,
            "search",
            queries=["retries back off exponentially", "src/net/retry.py backoff"],
            limit=5,
        )
        by_id = {h["id"]: h for h in found["hits"]}
        hit = by_id[decided.id]
        assert hit["kind"] == "note" and hit["author"] == lane.b.handle
        assert hit["task_id"] == lane.task_id and hit["task"]
        assert hit["time"] and "exponentially" in hit["snippet"]
        assert hit["next"] == f"task_timeline(task_id={lane.task_id}, around_id={decided.id})"
        context = await ok(
            client, "task_timeline", task_id=lane.task_id, around_id=decided.id, limit=3
        )
        assert [i["id"] for i in context["items"]] == [before.id, decided.id, after.id]
        # an edit leads to the file's history, through the same search tool
        assert by_id[edit]["next"] == (
            'search(query="src/net/retry.py", kinds=["claim", "release", "edit"])'
        )
        history = await ok(
            client, "search", query="src/net/retry.py", kinds=["claim", "release", "edit"]
        )
        assert [h["id"] for h in history["hits"]] == [edit]
        # bodies on request: one call for every hit's full text
        assert found["bodies"] == f"get_observations(ids={[h['id'] for h in found['hits']]})"
        nothing = await error(client, "search")
    assert "Pass query or queries" in nothing


async def test_the_timeline_pages_back_with_before_id(lane: Lane):
    async with connected() as client:
        ids = [
            (await ok(client, "task_post", content=f"m{i}", session_id=lane.a.handle))["id"]
            for i in range(5)
        ]
        page = await ok(client, "task_timeline", task_id=lane.task_id, limit=2)
        older = await ok(
            client,
            "task_timeline",
            task_id=lane.task_id,
            limit=2,
            before_id=page["next_before_id"],
        )

    assert [i["id"] for i in page["items"]] == ids[3:]
    assert [i["id"] for i in older["items"]] == ids[1:3]


# -- who is calling ---------------------------------------------------------------------------


async def test_without_session_id_and_no_session_in_this_process_the_error_says_what_to_pass(
    lane: Lane,
):
    lane.disown()
    before = snapshot(lane.store)
    async with connected() as client:
        text = await error(client, "claim_file", paths=["src/app.py"])
        read_only = await ok(client, "task_list")

    assert "pass session_id exactly as your colony-tasks SessionStart briefing" in text
    assert "<handle>:<key>" in text
    assert not text.startswith("Error executing tool")
    assert read_only["tasks"][0]["id"] == lane.task_id
    assert snapshot(lane.store) == before


async def test_session_id_may_be_a_handle_or_a_session_id(lane: Lane):
    async with connected() as client:
        by_handle = await ok(client, "task_post", content="x", session_id=lane.a.handle)
        by_id = await ok(client, "task_post", content="y", session_id=lane.a.id)
        padded = await ok(client, "task_post", content="z", session_id=f" {lane.a.handle} ")

    assert by_handle["author"] == by_id["author"] == padded["author"] == lane.a.handle


async def test_an_unknown_session_id_is_an_error_naming_it(lane: Lane):
    before = snapshot(lane.store)
    async with connected() as client:
        for name, args in [
            ("task_post", {"content": "x"}),
            ("task_list", {}),
            ("search", {"query": "x"}),
            ("task_timeline", {"task_id": lane.task_id}),
        ]:
            text = await error(client, name, **args, session_id="claude-0000")
            assert text.startswith("Session 'claude-0000' does not exist; leave session_id out")
    assert snapshot(lane.store) == before


async def test_without_session_id_the_session_of_an_ancestor_agent_process_acts(lane: Lane):
    agent = os.getppid()  # the in-memory server's ancestors start at the pytest's parent
    if agent <= 1:
        pytest.skip("pytest runs without a parent process to stand in for the agent")
    old = sessions.register(lane.store, "old", agent="claude", cwd=str(lane.repo), agent_pid=agent)
    async with connected() as client:
        first = await ok(client, "task_post", content="before /clear")
        sessions.end_session(lane.store, old.session)  # what SessionEnd does on /clear
        new = sessions.register(
            lane.store, "new", agent="claude", cwd=str(lane.repo), agent_pid=agent
        )
        second = await ok(client, "task_post", content="after /clear")

    assert first["author"] == old.session.handle
    assert second["author"] == new.session.handle


# -- bad arguments ----------------------------------------------------------------------------

BAD_CALLS = [
    ("task_timeline", {"limit": -5}, "limit: Input should be greater than or equal to 1"),
    ("task_list", {"limit": "many"}, "limit: Input should be a valid integer"),
    ("task_list", {"status": "closed"}, "status: Input should be 'open', 'done' or 'all'"),
    ("task_post", {}, "content: Field required"),
    ("task_post", {"content": ""}, "content: String should have at least 1 character"),
    ("task_post", {"content": "   "}, "The message must be non-empty text."),
    ("task_post", {"content": "x" * 100_000}, "The message is 100000 characters"),
    ("task_post", {"content": "hi", "kind": "shout"}, "kind: Input should be 'note'"),
    ("task_post", {"content": "hi", "to": "nobody"}, "Session 'nobody' does not exist"),
    ("task_post", {"content": "hi", "in_reply_to": 999_999}, "Message 999999 is not in task"),
    ("task_post", {"content": "hi", "task_id": -1}, "task_id: Input should be greater than"),
    ("task_post", {"content": "hi", "task_id": 999_999}, "Task 999999 does not exist."),
    ("task_updates_since", {"since_id": -1}, "since_id: Input should be greater than"),
    ("claim_file", {"paths": []}, "paths: List should have at least 1 item"),
    ("claim_file", {"paths": "src/app.py"}, "paths: Input should be a valid list"),
    ("claim_file", {"paths": [""]}, "A path must be a non-empty string."),
    ("claim_file", {"paths": ["/etc/passwd"]}, "is outside the repository"),
    ("claim_file", {"paths": ["a.py"], "ttl_minutes": 0}, "ttl_minutes: Input should be"),
    ("release_file", {"paths": []}, "paths: List should have at least 1 item"),
    ("ask_question", {"question": "x" * 100_000}, "the limit is 16000"),
    ("ask_question", {"question": "Why?", "to": "human"}, "No active human session"),
    ("answer_question", {"question_id": 999_999, "answer": "x"}, "Question 999999 does not"),
    ("answer_question", {"question_id": "abc", "answer": "x"}, "question_id: Input should be"),
    ("hand_off", {"summary": "x", "files": ["../outside.py"]}, "is outside the repository"),
    ("accept_handoff", {"handoff_id": 999_999}, "Handoff 999999 does not exist."),
    ("record_decision", {"decision": ""}, "decision: String should have at least 1 character"),
    ("report_blocker", {"blocker": "x" * 100_000}, "the limit is 16000"),
    ("search", {"query": ""}, "query: String should have at least 1 character"),
    ("search", {"query": "x", "kinds": ["nonsense"]}, "kinds.0: Input should be 'note'"),
    ("search", {"queries": ["a", "b", "c", "d", "e", "f"]}, "queries: List should have at most 5"),
    ("get_observations", {"ids": []}, "ids: List should have at least 1 item"),
    ("get_observations", {"ids": ["one"]}, "ids.0: Input should be a valid integer"),
]


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    BAD_CALLS,
    ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(BAD_CALLS)],
)
async def test_bad_arguments_are_tool_errors_that_change_nothing(
    lane: Lane, name: str, args: dict[str, Any], expected: str
):
    actions.post(lane.store, lane.a, "an existing message")
    before = snapshot(lane.store)
    async with connected() as client:
        text = await error(client, name, **args, session_id=lane.a.handle)
        alive = await ok(client, "task_list")

    assert expected in text
    assert not text.startswith("Error executing tool") and text.endswith(".")
    assert "errors.pydantic.dev" not in text and "input_value" not in text
    assert alive["tasks"]
    assert snapshot(lane.store) == before


async def test_a_core_error_is_exactly_the_core_sentence(lane: Lane):
    async with connected() as client:
        asked = await ok(client, "ask_question", question="Mine?", session_id=lane.a.handle)
        text = await error(
            client, "answer_question", question_id=asked["id"], answer="x", session_id=lane.a.id
        )
    assert (
        text
        == f"Question {asked['id']} is your own. To take it back: withdraw(item_id={asked['id']})."
    )


def generated_titles(schema: Any) -> list[str]:
    """Pydantic's ``"title": "..."`` keys (a property *named* title does not count)."""
    if isinstance(schema, list):
        return [t for part in schema for t in generated_titles(part)]
    if not isinstance(schema, dict):
        return []
    found = [schema["title"]] if isinstance(schema.get("title"), str) else []
    for key, value in schema.items():
        if key == "properties":
            found += [t for prop in value.values() for t in generated_titles(prop)]
        elif key != "title":
            found += generated_titles(value)
    return found


# -- the server -------------------------------------------------------------------------------


async def test_tools_list_is_complete_typed_and_under_14_kb(lane: Lane):
    async with connected() as client:
        listed = await client.list_tools()
        instructions = client.instructions

    wire = json.dumps(
        listed.model_dump(by_alias=True, exclude_none=True, mode="json"), separators=(",", ":")
    )
    assert len(wire.encode()) < 14_000
    assert {t.name for t in listed.tools} == TOOL_NAMES
    for tool in listed.tools:
        read_only = bool(tool.annotations and tool.annotations.read_only_hint)
        # Read tools publish their result schema; write tools' results are small and named
        # by their description (their schemas would cost ~5 KB of every session's context).
        assert bool(tool.output_schema) == read_only, tool.name
        assert not tool.output_schema or tool.output_schema["type"] == "object", tool.name
        assert "session_id" in tool.input_schema["properties"], tool.name
        assert "session_id" not in tool.input_schema.get("required", []), tool.name
        assert len(tool.description) <= 160, tool.name
        assert not generated_titles(tool.input_schema), tool.name
        assert not generated_titles(tool.output_schema or {}), tool.name
    assert instructions and instructions.count(". ") <= 2


async def test_the_store_is_opened_once_per_run_and_closed_at_shutdown(lane: Lane):
    opened: list[Store] = []

    def open_store() -> Store:
        opened.append(open_default())
        return opened[-1]

    async with connected(open_store=open_store) as client:
        await ok(client, "task_list")
        await ok(client, "task_post", content="x", session_id=lane.a.handle)

    assert len(opened) == 1
    with pytest.raises(Exception, match="closed"):
        opened[0].conn.execute("SELECT 1")


async def test_concurrent_calls_share_the_one_store_safely(lane: Lane):
    results: list[dict[str, Any]] = []

    async def post(who: Session, i: int) -> None:
        results.append(await ok(client, "task_post", content=f"m{i}", session_id=who.handle))
        results.append(await ok(client, "claim_file", paths=[f"f{i}.py"], session_id=who.handle))

    async with connected() as client, anyio.create_task_group() as group:
        for i in range(20):
            group.start_soon(post, lane.a if i % 2 else lane.b, i)

    posts = [r["id"] for r in results if "id" in r]
    assert len(posts) == len(set(posts)) == 20
    assert len(lane.store.list_claims()) == 20


def test_the_mcp_command_is_listed_and_other_commands_do_not_import_the_sdk():
    assert "mcp" in CliRunner().invoke(cli, ["--help"]).output
    probe = (
        "import sys; from colony_tasks.cli import cli;"
        " print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_server')))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# -- chains ---------------------------------------------------------------------------------------


async def test_a_chain_through_the_tools_enforces_the_turn_rule(lane: Lane):
    async with connected() as client:
        created = await client.call_tool(
            "chain_create", {"name": "API review", "session_id": lane.a.handle}
        )
        chain = created.structured_content
        cid = chain["chain_id"]
        assert chain["coordinator"] == chain["turn_holder"] == lane.a.handle
        passed = await ok(
            client,
            "chain_pass",
            chain_id=cid,
            to=lane.b.handle,
            prompt="Review the endpoints",
            session_id=lane.a.handle,
        )
        assert passed["kind"] == "turn" and passed["delivery"] == {lane.b.handle: "pending"}
        refused = await error(
            client, "chain_say", chain_id=cid, content="me first", session_id=lane.a.handle
        )
        assert refused == (
            f"It is {lane.b.handle}'s turn in chain {cid}; only the turn holder"
            " may post. Wait until the coordinator passes you the turn."
        )
        said = await ok(
            client, "chain_say", chain_id=cid, content="Looks good", session_id=lane.b.handle
        )
        assert said["kind"] == "note"
        stolen = await error(
            client,
            "chain_pass",
            chain_id=cid,
            to=lane.a.handle,
            prompt="mine",
            session_id=lane.b.handle,
        )
        assert stolen == f"Only the coordinator of chain {cid} can pass the turn."
        closed = await ok(client, "chain_close", chain_id=cid, session_id=lane.a.handle)
        assert closed["status"] == "done" and "turn_holder" not in closed
        after = await error(
            client, "chain_say", chain_id=cid, content="late", session_id=lane.a.handle
        )
        assert "done" in after
        timeline = await ok(client, "task_timeline", task_id=cid, session_id=lane.a.handle)
    assert [i["kind"] for i in timeline["items"]] == ["turn", "turn", "note", "turn"]


# -- search and the embedding worker -------------------------------------------------------------


async def test_search_uses_keywords_then_meaning_once_the_worker_has_embedded(lane: Lane):
    from colony_tasks.mcp_server import background

    actions.post(lane.store, lane.a, "the viewer stylesheet breaks on narrow screens")
    actions.post(lane.store, lane.a, "Retry policy: exponential backoff with jitter")
    async with connected() as client:
        before = await ok(
            client, "search", query="css layout on mobile phones", session_id=lane.b.handle
        )
        assert before["hits"] == []  # no shared words, no vectors yet
        worker = background.EmbeddingWorker(lane.store.path)
        assert worker.drain() == lane.store.count_observations()
        after = await ok(
            client, "search", query="css layout on mobile phones", session_id=lane.b.handle
        )
    assert "stylesheet" in after["hits"][0]["snippet"]


async def test_an_answer_without_its_question_is_refused_by_the_core(lane: Lane):
    async with connected() as client:
        text = await error(
            client, "task_post", content="42", kind="answer", session_id=lane.a.handle
        )
    assert text.startswith("An answer needs the id of the question it answers")


async def test_text_arguments_that_look_like_json_are_stored_verbatim(lane: Lane):
    texts = ['{"retries": 3}', "[1, 2]", "null", "true", "42", '"quoted"']
    async with connected() as client:
        for text in texts:
            decided = await ok(
                client, "record_decision", decision="d", rationale=text, session_id=lane.a.handle
            )
            blocked = await ok(
                client, "report_blocker", blocker="b", waiting_on=text, session_id=lane.a.handle
            )
            claimed = await ok(
                client, "claim_file", paths=["src/j.py"], note=text, session_id=lane.a.handle
            )
            assert lane.store.get_observation(decided["id"]).text == f"d\nRationale: {text}"
            assert lane.store.get_observation(blocked["id"]).meta == {"waiting_on": text}
            assert claimed["granted"][0]["note"] == text
        refused = await error(client, "task_post", content="x", to="null", session_id=lane.a.id)
    assert "Session 'null' does not exist" in refused  # not silently a broadcast


async def test_an_over_long_claim_note_is_refused(lane: Lane):
    async with connected() as client:
        text = await error(
            client, "claim_file", paths=["a.py"], note="n" * 16_001, session_id=lane.a.handle
        )
    assert "claim note is 16001 characters" in text and lane.store.list_claims() == []


async def test_hand_off_names_the_files_it_could_not_hand_over(lane: Lane):
    async with connected() as client:
        await ok(client, "claim_file", paths=["src/mine.py"], session_id=lane.a.handle)
        handed = await ok(
            client,
            "hand_off",
            summary="take these",
            files=["src/mine.py", "src/nobodys.py"],
            session_id=lane.a.handle,
        )
    assert handed["ok"] is False and "src/nobodys.py" in handed["message"]
    assert lane.store.get_observation(handed["id"]).meta["files"] == ["src/mine.py"]


@pytest.mark.parametrize(
    ("fault", "cause"),
    [("PRAGMA query_only = 1", "the store is read-only"), ("disk full", "the disk is full")],
)
async def test_a_store_that_cannot_take_the_write_is_named_as_the_cause(
    lane: Lane, fault: str, cause: str
):
    """Not the SDK's bare 'Error executing tool': what failed, and that nothing was saved."""
    served: list[Store] = []

    def open_store() -> Store:
        served.append(open_default())
        return served[-1]

    async with connected(open_store=open_store) as client:
        await ok(client, "task_list")
        conn = served[0].conn
        if fault == "disk full":
            conn.execute(
                f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}"
            )
            content = "a long note " * 1000
        else:
            conn.execute(fault)
            content = "a note"
        text = await error(client, "task_post", content=content, session_id=lane.a.handle)

    assert not text.startswith("Error executing tool"), text
    assert cause in text and "nothing of this call was saved" in text.lower(), text
