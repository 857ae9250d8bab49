"""A session acts only as itself: through the core, the MCP server, the CLI, the viewer and
the hooks. Also the portable process ancestry the MCP server tells its caller by."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client

from colony_tasks.base import procs
from colony_tasks.base.errors import NotAllowed, NotFound
from colony_tasks.base.models import Session
from colony_tasks.cli import cli
from colony_tasks.domain import delivery, identity, sessions
from colony_tasks.domain.messages import LoopGuard
from colony_tasks.mcp_server import identity as mcp_identity
from colony_tasks.mcp_server.server import build_server
from colony_tasks.render import briefing
from colony_tasks.store import Store, open_default
from colony_tasks.usecases import actions, events
from tests.support.helpers import snapshot
from tests.support.hookrun import apply_payload

ME = os.getppid()  # the in-memory MCP server's nearest ancestor: "this agent"
OTHER = os.getpid()  # a live process that is not among the server's ancestors


def register(store: Store, sid: str, agent: str, repo: Path, pid: int | None) -> Session:
    return sessions.register(store, sid, agent=agent, cwd=str(repo), agent_pid=pid).session


@pytest.fixture
def crew(home: Path, repo: Path) -> Iterator[dict[str, Session]]:
    store = open_default()
    people = {
        "me": register(store, "sess-me", "claude", repo, ME),
        "other": register(store, "sess-other", "codex", repo, OTHER),
        "human": actions.human(store, "alice", str(repo)),
    }
    store.close()
    yield people


@pytest.fixture
def db(home: Path, crew: dict[str, Session]) -> Iterator[Store]:
    store = open_default()
    yield store
    store.close()


# -- the core rule ------------------------------------------------------------------------------


def test_a_detected_caller_acts_as_itself_and_may_name_itself(db: Store, crew):
    assert identity.agent_caller(db, None, [ME]).id == "sess-me"
    assert identity.agent_caller(db, crew["me"].handle, [ME]).id == "sess-me"
    assert identity.agent_caller(db, "sess-me", [ME]).id == "sess-me"


def test_the_agents_environment_chooses_only_among_the_sessions_of_an_ancestor(
    db: Store, repo: Path, crew
):
    # After /clear one agent process has had two live sessions; ancestry alone finds the
    # newer, Claude Code's CLAUDE_CODE_SESSION_ID names the one it runs now.
    newer = register(db, "sess-me-2", "claude", repo, ME)
    assert identity.agent_caller(db, None, [ME]).id == newer.id
    assert identity.agent_caller(db, None, [ME], "sess-me").id == "sess-me"
    # A live session of another agent process (its id is printed by `sessions --json`): the
    # environment of a server that agent did not start proves nothing.
    assert identity.agent_caller(db, None, [ME], "sess-other").id == newer.id
    with pytest.raises(NotFound, match="Cannot tell which"):
        identity.agent_caller(db, None, [], "sess-other")
    with pytest.raises(NotAllowed, match="must carry the session's key"):
        identity.agent_caller(db, crew["other"].handle, [], "sess-other")


def test_an_ended_unknown_or_human_environment_session_falls_back_to_ancestry(db: Store, crew):
    sessions.end_session(
        db, db.get_session("sess-other")
    )  # e.g. /clear moved the agent to a new session
    assert identity.agent_caller(db, None, [ME], "sess-other").id == "sess-me"
    assert identity.agent_caller(db, None, [ME], "no-such-session").id == "sess-me"
    assert identity.agent_caller(db, None, [ME], crew["human"].id).id == "sess-me"
    with pytest.raises(NotFound):
        identity.agent_caller(db, None, [], "sess-other")


def test_a_detected_caller_naming_another_session_is_refused(db: Store, crew):
    with pytest.raises(NotAllowed, match=f"You are {crew['me'].handle}.*another session"):
        identity.agent_caller(db, crew["other"].handle, [ME])
    cred = identity.credential(db, crew["other"])
    with pytest.raises(NotAllowed, match="acts only as itself"):
        identity.agent_caller(db, cred, [ME])  # even with the other's key


def test_an_agent_can_never_act_as_a_human(db: Store, crew):
    for ref in (crew["human"].handle, crew["human"].id):
        with pytest.raises(NotAllowed, match="cannot act as a human"):
            identity.agent_caller(db, ref, [ME])
        with pytest.raises(NotAllowed, match="cannot act as a human"):
            identity.agent_caller(db, ref, [])
    assert identity.credential(db, crew["human"]) is None  # humans have no key to pass


def test_an_undetected_caller_needs_the_sessions_key(db: Store, crew):
    other = crew["other"]
    with pytest.raises(NotAllowed, match="must carry the session's key"):
        identity.agent_caller(db, other.handle, [])
    with pytest.raises(NotAllowed, match="must carry the session's key"):
        identity.agent_caller(db, f"{other.handle}:{'0' * 16}", [])
    cred = identity.credential(db, other)
    assert cred and cred.startswith(f"{other.handle}:")
    assert identity.agent_caller(db, cred, []).id == other.id
    assert identity.agent_caller(db, f"{other.id}:{cred.split(':')[1]}", []).id == other.id
    with pytest.raises(NotFound, match="Cannot tell which colony-tasks session is calling"):
        identity.agent_caller(db, None, [])


def test_the_key_is_shown_only_in_the_sessions_own_briefing(home: Path, repo: Path):
    store = open_default()
    mine, _ = briefing.render(
        store, events.session_start(store, events.Event("s1", "claude", str(repo), ME))
    )
    theirs, _ = briefing.render(
        store, events.session_start(store, events.Event("s2", "codex", str(repo), OTHER))
    )
    key1 = identity.credential(store, store.get_session("s1"))
    key2 = identity.credential(store, store.get_session("s2"))
    assert key1 and key2 and key1 != key2
    assert key1 in mine and key2 not in mine
    assert key2 in theirs and key1 not in theirs
    store.close()


def test_an_id_never_shadows_a_handle(db: Store, repo: Path, crew):
    me = crew["me"]
    squatter = register(db, me.handle, "codex", repo, OTHER)  # its session id is my handle
    assert squatter.handle != me.handle
    assert sessions.find_session(db, me.handle).id == me.id
    posted = actions.post(db, crew["human"], "for you", to=me.handle)
    assert [r["session_id"] for r in posted.recipients] == [me.id]
    handoff = actions.hand_off(db, crew["other"], "yours", to=me.handle)
    question = actions.ask(db, crew["other"], "yours?", to=me.handle)
    assert delivery.pending_for(db, squatter) == []
    with pytest.raises(NotAllowed, match="not to you"):
        actions.accept_handoff(db, squatter, handoff.id)
    assert [o.id for o in delivery.pending_for(db, me)] == [handoff.id, question.id]
    # and a new handle is never another session's id
    sessions.register(db, "zz", agent="codex", cwd=str(repo))
    assert sessions.make_handle(db, "sess", "other") != "sess-other"


# -- every front end ----------------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _call(name: str, **args: Any) -> tuple[bool, str]:
    async with Client(build_server(background=False), mode="legacy") as client:
        result = await client.call_tool(name, args)
    return result.is_error, result.content[0].text


@pytest.mark.anyio
async def test_mcp_refuses_to_act_as_another_session_a_human_or_a_coordinator(db: Store, crew):
    chain = actions.chain_create(db, crew["other"], "review")
    actions.claim(db, crew["other"], ["src/x.py"])
    before = snapshot(db)
    attempts = [
        ("task_post", {"content": "hi", "session_id": crew["other"].handle}),
        ("release_file", {"session_id": crew["other"].id}),
        ("task_post", {"content": "hi", "session_id": crew["human"].handle}),
        (
            "chain_say",
            {"chain_id": chain.chain_id, "content": "x", "session_id": crew["other"].handle},
        ),
        ("chain_close", {"chain_id": chain.chain_id, "session_id": crew["other"].handle}),
        ("chain_close", {"chain_id": chain.chain_id}),  # as myself: not the coordinator
    ]
    for name, args in attempts:
        failed, text = await _call(name, **args)
        assert failed, (name, text)
        assert (
            "acts only as itself" in text
            or "cannot act as a human" in text
            or ("coordinator" in text)
        ), text
    assert snapshot(db) == before


@pytest.mark.anyio
async def test_mcp_without_ancestry_accepts_only_the_keyed_session_id(
    db: Store, crew, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(mcp_identity, "_ANCESTRY", [[]])  # a platform with no process table
    other = crew["other"]
    failed, text = await _call("task_post", content="x", session_id=other.handle)
    assert failed and "key" in text
    failed, text = await _call("task_post", content="x", session_id=identity.credential(db, other))
    assert not failed and json.loads(text)["author"] == other.handle


@pytest.mark.anyio
async def test_mcp_binds_to_the_session_its_environment_names_among_its_agents(
    db: Store, repo: Path, crew, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(mcp_identity, "_ANCESTRY", [[ME]])
    newer = register(db, "sess-me-2", "claude", repo, ME)  # the same agent after /clear
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "sess-me")
    failed, text = await _call("task_post", content="from the environment")
    assert not failed and json.loads(text)["author"] == crew["me"].handle
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "sess-other")  # not an ancestor's session
    failed, text = await _call("task_post", content="as another agent")
    assert not failed and json.loads(text)["author"] == newer.handle
    monkeypatch.setattr(mcp_identity, "_ANCESTRY", [[]])  # no process table: nothing proves it
    failed, text = await _call("task_post", content="as another agent")
    assert failed and "Cannot tell which" in text


def test_cli_acts_only_as_the_human_named(home: Path, repo: Path, crew, monkeypatch):
    monkeypatch.chdir(repo)
    monkeypatch.setattr(procs, "ancestry", lambda limit=64: [])  # outside any agent's tree
    out = CliRunner().invoke(
        cli, ["post", "1", "hello", "--as", crew["me"].handle, "--json"], catch_exceptions=False
    )
    assert out.exit_code == 0, out.output
    store = open_default()
    obs = store.get_observation(json.loads(out.output)["id"])
    author = store.get_session(obs.session_id)
    store.close()
    assert author.id == f"human:{crew['me'].handle}" and author.agent == "human"
    assert author.handle != crew["me"].handle  # never the agent's handle


def test_viewer_acts_as_its_human(home: Path, repo: Path, crew):
    from colony_tasks.viewer import actions as viewer_actions

    store = open_default()
    done = viewer_actions.post_message(store, crew["me"].handle, str(repo), 1, {"text": "hi"})
    author = store.get_session(store.get_observation(done["id"]).session_id)
    store.close()
    assert author.agent == "human" and author.id != crew["me"].id


def test_a_hook_cannot_end_or_alter_another_live_agents_session(db: Store, repo: Path, crew):
    other = crew["other"]
    actions.claim(db, other, ["src/y.py"])
    intruder = events.Event(other.id, "codex", str(repo), ME)
    with pytest.raises(NotAllowed, match="still running"):
        events.session_end(db, intruder)
    with pytest.raises(NotAllowed, match="still running"):
        events.prompt(db, intruder, "pretend")
    with pytest.raises(NotAllowed, match="still running"):
        events.session_start(db, intruder)
    after = db.get_session(other.id)
    assert after.ended_at is None and after.agent_pid == OTHER
    assert [c["pattern"] for c in db.list_claims(session_id=other.id)] == ["src/y.py"]


def test_a_hook_may_end_its_own_session_or_one_whose_process_is_gone(db: Store, repo, crew):
    events.session_end(db, events.Event("sess-me", "claude", str(repo), ME))
    assert db.get_session("sess-me").ended_at is not None
    gone = register(db, "sess-gone", "claude", repo, 2**22 + 12345)  # no such process
    assert not procs.alive(gone.agent_pid)
    events.session_end(db, events.Event("sess-gone", "claude", str(repo), ME))
    assert db.get_session("sess-gone").ended_at is not None


def test_the_hook_subprocess_leaves_another_agents_session_alone(db: Store, repo, crew, home):
    from tests.support.hookrun import run_hook

    other = crew["other"]  # recorded under this pytest process, alive; the hook's parent too
    db.conn.execute("UPDATE sessions SET agent_pid = ? WHERE id = ?", (os.getppid(), other.id))
    done = run_hook("session-end", {"session_id": other.id, "cwd": str(repo)}, home)
    assert done.returncode == 0 and done.stdout == ""
    assert db.get_session(other.id).ended_at is None


# -- reading, handing off, the loop guard -------------------------------------------------------


def test_reading_a_chain_never_joins_it(db: Store, crew):
    chain = actions.chain_create(db, crew["other"], "design")
    got = actions.updates_since(db, crew["me"], chain.chain_id)
    assert got.items
    assert [o.id for o in got.items] == [o.id for o in actions.chain_show(db, chain.chain_id)[1]]
    actions.timeline(db, crew["me"], chain.chain_id)
    assert not db.is_participant(chain.chain_id, crew["me"].id)


def test_hand_off_hands_over_only_files_the_author_holds(db: Store, crew):
    me, other = crew["me"], crew["other"]
    actions.claim(db, me, ["src/mine.py"])
    actions.claim(db, other, ["src/theirs.py"])
    out = actions.hand_off(db, me, "take these", files=["src/mine.py", "src/theirs.py"])
    assert out.ok is False and "src/theirs.py" in out.message and "src/mine.py" not in out.message
    accepted = actions.accept_handoff(db, other, out.id)
    assert [c["pattern"] for c in accepted.claims] == ["src/mine.py"]
    holders = {c["pattern"]: c["session_id"] for c in db.list_claims()}
    assert holders == {"src/mine.py": other.id, "src/theirs.py": other.id}


def test_accepting_moves_only_what_the_author_still_holds(db: Store, crew):
    me, other = crew["me"], crew["other"]
    actions.claim(db, me, ["src/a.py"])
    out = actions.hand_off(db, me, "take it", files=["src/a.py"])
    actions.release(db, me, ["src/a.py"])
    assert actions.accept_handoff(db, other, out.id).claims == []


def test_the_loop_guard_counts_broadcast_questions_and_handoffs(db: Store, crew, monkeypatch):
    from colony_tasks.base import settings

    monkeypatch.setattr(settings, "get", lambda *k: 3 if k == ("chains", "loop_limit") else None)
    me, other = crew["me"], crew["other"]
    actions.ask(db, me, "anyone?")
    actions.hand_off(db, other, "someone take this")
    actions.ask(db, other, "still there?")
    with pytest.raises(LoopGuard, match="to everyone was not sent"):
        actions.ask(db, me, "hello?")
    actions.post(db, crew["human"], "I'm here")
    actions.ask(db, me, "ok now?")


# -- portable ancestry --------------------------------------------------------------------------

TABLE = {
    500: (400, "/bin/zsh"),  # the shell Codex runs the hook command in
    400: (300, "codex"),
    300: (1, "-zsh"),
}


@pytest.fixture
def macos(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """No /proc; ``ps`` answers from TABLE. Returns the pids ps was asked about."""
    asked: list[int] = []

    def fake_ps(pid: int) -> str | None:
        asked.append(pid)
        if pid not in TABLE:
            return None
        ppid, comm = TABLE[pid]
        return f"{ppid:>5} {comm}\n"

    monkeypatch.setattr(procs, "PROC_ROOT", "/nonexistent-proc")
    monkeypatch.setattr(procs.sys, "platform", "darwin")
    monkeypatch.setattr(procs, "libproc_reader", lambda: None)  # libproc cannot be loaded
    monkeypatch.setattr(procs.os.path, "exists", lambda p: p == procs.PS)
    monkeypatch.setattr(procs, "run_ps", fake_ps)
    monkeypatch.setattr(procs.os, "getppid", lambda: 500)
    return asked


def test_without_proc_ancestry_is_read_with_ps(macos: list[int]):
    assert procs.backend() == "ps"
    assert procs.agent_pid() == 400  # the shell is skipped: the agent, as the MCP server sees it
    assert procs.ancestors() == [500, 400, 300]


def test_without_proc_the_per_tool_hooks_spawn_nothing(macos: list[int]):
    assert procs.agent_pid(cheap=True) is None  # "unknown": keep what SessionStart recorded
    assert macos == []


def test_a_session_recorded_through_a_shell_is_found_by_the_mcp_server(
    macos: list[int], home: Path, repo: Path
):
    store = open_default()
    events.session_start(store, events.Event("cx", "codex", str(repo), procs.agent_pid()))
    events.prompt(store, events.Event("cx", "codex", str(repo), procs.agent_pid(cheap=True)), "")
    monkeypatch_server_ancestry = [400, 300]  # the MCP server is codex's direct child
    assert identity.agent_caller(store, None, monkeypatch_server_ancestry).id == "cx"
    store.close()


def bsdinfo(ppid: int, comm: str, name: str = "") -> bytes:
    """A ``struct proc_bsdinfo`` as libproc fills it in (only the fields procs reads set)."""
    raw = bytearray(procs.BSDINFO_SIZE)
    raw[16:20] = ppid.to_bytes(4, "little")
    raw[48:64] = comm.encode()[:15].ljust(16, b"\0")
    raw[64:96] = name.encode()[:31].ljust(32, b"\0")
    return bytes(raw)


AGENT_A, AGENT_B = OTHER, ME  # two live processes: two agents on one Mac
MAC_TABLE = {
    9001: bsdinfo(AGENT_A, "zsh"),  # the shell agent A runs its hook commands in
    9002: bsdinfo(AGENT_B, "bash"),  # agent B's
    AGENT_A: bsdinfo(1, "codex"),
    AGENT_B: bsdinfo(1, "node", "claude"),  # pbi_name, when set, is the longer name
}


class FakeMac:
    """No /proc and no ps; libproc answers from a process table. ``hook_under(pid)`` makes
    ``pid`` this process's parent."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, table: dict[int, bytes]) -> None:
        self.table, self.read, self.ps_calls = table, [], []
        self.monkeypatch = monkeypatch
        monkeypatch.setattr(procs, "PROC_ROOT", "/nonexistent-proc")
        monkeypatch.setattr(procs.sys, "platform", "darwin")
        monkeypatch.setattr(procs, "libproc_reader", lambda: self.reader)
        monkeypatch.setattr(procs, "run_ps", lambda pid: self.ps_calls.append(pid))

    def reader(self, pid: int) -> bytes | None:
        self.read.append(pid)
        return self.table.get(pid)

    def hook_under(self, pid: int) -> None:
        self.monkeypatch.setattr(procs.os, "getppid", lambda: pid)


@pytest.fixture
def mac(monkeypatch: pytest.MonkeyPatch) -> FakeMac:
    return FakeMac(monkeypatch, MAC_TABLE)


def test_on_macos_ancestry_is_read_through_libproc_without_spawning(mac: FakeMac):
    assert procs.backend() == "libproc"
    mac.hook_under(9001)
    assert procs.agent_pid(cheap=True) == AGENT_A  # per-tool hooks too: the shell is skipped
    assert procs.agent_pid() == AGENT_A
    mac.hook_under(9002)
    assert procs.agent_pid(cheap=True) == AGENT_B
    assert procs.ancestors() == [9002, AGENT_B]
    assert mac.read and mac.ps_calls == []


def tool_payload(session_id: str, repo: Path) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "cwd": str(repo),
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_response": {"stdout": "a.py"},
    }


def test_on_macos_a_per_tool_hook_of_another_live_agent_is_refused_as_on_linux(
    mac: FakeMac, home: Path, repo: Path
):
    store = open_default()
    mac.hook_under(9001)
    apply_payload(store, "session-start", {"session_id": "cx", "cwd": str(repo)}, "codex")
    assert store.get_session("cx").agent_pid == AGENT_A

    mac.hook_under(9002)  # agent B's hooks, with a payload carrying agent A's session id
    payload = tool_payload("cx", repo)
    for hook in ("pre-tool-use", "post-tool-use"):
        with pytest.raises(NotAllowed, match="still running"):
            apply_payload(store, hook, payload, "claude")
    with pytest.raises(NotAllowed, match="still running"):
        apply_payload(store, "user-prompt-submit", {**payload, "prompt": "pretend"}, "claude")
    after = store.get_session("cx")
    assert after.agent_pid == AGENT_A and after.ended_at is None

    mac.hook_under(9001)  # agent A's own hooks pass
    apply_payload(store, "user-prompt-submit", {**payload, "prompt": "go on"}, "codex")
    apply_payload(store, "post-tool-use", payload, "codex")
    assert store.get_session("cx").agent_pid == AGENT_A
    store.close()


def test_on_macos_an_unreadable_chain_records_and_checks_nothing(
    monkeypatch: pytest.MonkeyPatch, home: Path, repo: Path
):
    mac = FakeMac(monkeypatch, {9001: bsdinfo(AGENT_A, "zsh")})  # agent B's chain: unreadable
    store = open_default()
    mac.hook_under(9001)
    apply_payload(store, "session-start", {"session_id": "cx", "cwd": str(repo)}, "codex")
    mac.hook_under(9002)
    assert procs.agent_pid(cheap=True) is None  # unknown, not the parent's pid as a guess
    assert procs.ancestors() == [9002]
    apply_payload(store, "post-tool-use", tool_payload("cx", repo), "claude")
    # the owner SessionStart recorded stays; the MCP server still finds agent A's session
    assert store.get_session("cx").agent_pid == AGENT_A
    assert identity.agent_caller(store, None, [AGENT_A]).id == "cx"
    store.close()


def test_elsewhere_there_is_no_ancestry_and_no_guess(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(procs, "PROC_ROOT", "/nonexistent-proc")
    monkeypatch.setattr(procs.sys, "platform", "win32")
    assert procs.backend() == "none"
    assert procs.ancestors() == []
    assert procs.agent_pid() == os.getppid()


@pytest.mark.anyio
async def test_reading_a_chain_over_mcp_never_joins_it(db: Store, crew):
    chain = actions.chain_create(db, crew["other"], "design")
    for name in ("task_updates_since", "task_timeline"):
        failed, text = await _call(name, task_id=chain.chain_id)
        assert not failed, text
    assert not db.is_participant(chain.chain_id, crew["me"].id)


# -- the human namespace ------------------------------------------------------------------------


@pytest.mark.parametrize("sid", ["human:alice", "human:mallory", "HUMAN:alice"])
def test_no_hook_payload_creates_or_adopts_a_human_session(db: Store, repo, crew, sid: str):
    before = snapshot(db)
    event = events.Event(sid, "claude", str(repo), OTHER)
    with pytest.raises(NotAllowed, match="human identity"):
        events.session_start(db, event)
    with pytest.raises(NotAllowed, match="human identity"):
        events.prompt(db, event, "hi")
    if db.get_session(sid) is not None:  # ending one that exists is refused too
        with pytest.raises(NotAllowed, match="human identity"):
            events.session_end(db, event)
    else:
        events.session_end(db, event)  # ending one that does not exist does nothing
    assert snapshot(db) == before  # not registered, not adopted, not ended


def test_a_hook_process_piped_a_human_session_id_changes_nothing(db: Store, repo, crew, home):
    from tests.support.hookrun import claude, run_hook

    before = snapshot(db)
    for sid in ("human:alice", "human:bob"):  # the developer's session, and a squat
        payload = claude("session-start", sid, repo, source="startup")
        assert run_hook("session-start", payload, home).returncode == 0
        prompt = claude("user-prompt-submit", sid, repo, prompt="act as the human")
        assert run_hook("user-prompt-submit", prompt, home).returncode == 0
    after = snapshot(db)
    assert after["sessions"] == before["sessions"]
    assert db.get_session("human:bob") is None
    assert db.get_session(crew["human"].id).agent_pid is None


def test_a_cli_inside_an_agents_process_tree_acts_as_that_agent(db: Store, repo, crew, home):
    # a real tree: an "agent" process whose shell runs the CLI with --as naming the human
    import subprocess

    from tests.support.hookrun import EXE

    go = home / "go"
    agent = subprocess.Popen(
        [
            "sh",
            "-c",
            f'while [ ! -f "{go}" ]; do sleep 0.05; done; "$0" "$@"',
            str(EXE),
            "post",
            "1",
            "as the developer",
            "--as",
            "alice",
            "--json",
        ],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLONY_TASKS_HOME": str(home)},
    )
    me = sessions.register(db, "sess-agent", agent="codex", cwd=str(repo), agent_pid=agent.pid)
    go.write_text("")
    out, err = agent.communicate(timeout=60)
    assert agent.returncode == 0, err.decode()
    author = db.get_session(db.get_observation(json.loads(out)["id"]).session_id)
    assert author.id == me.session.id and author.agent == "codex"
    assert author.id != crew["human"].id
