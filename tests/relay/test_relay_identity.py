"""Attacks on the relay as another agent of the same user would make them: requests through
its socket naming a victim session, with no agent pid or a made-up one, and the product's own
``colony-tasks hook wait`` fed the victim's session id.

The victim is a real process (a stand-in agent whose hooks are its children); the attacker is
this test's process or a hook it runs, none of them in the victim's process tree. The relay
must judge every request by the agent process the kernel says sent it.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from colony_tasks.domain import delivery, sessions
from colony_tasks.hooks.payload import request as hook_request
from colony_tasks.relay import wire
from colony_tasks.store import Store, open_local
from colony_tasks.usecases import actions
from tests.support.gitutil import make_repo
from tests.support.helpers import snapshot, wait_held
from tests.support.hookrun import EXE, claude, relay_status
from tests.support.standin import StandIn

NO_SUCH_PROCESS = 2**22 + 4321


def send(request: dict[str, Any], timeout: float = 10.0) -> dict[str, Any] | None:
    """One request through the relay's socket, as any process of the user can send it."""
    return wire.ask(wire.socket_path(wire.LOCAL_KEY), request, timeout)


def forged(event: str, payload: dict[str, Any], pid: int | None) -> dict[str, Any]:
    """The wire record a hook would send for ``payload``, with the agent pid replaced."""
    record = hook_request(event, "claude", payload, json.dumps(payload).encode()).to_wire()
    record["pid"] = pid
    return record


def refusals(home: Path) -> int:
    log = home / "hooks.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return sum("refused" in line for line in lines)


@pytest.fixture
def victim(home: Path, repo: Path) -> Iterator[StandIn]:
    agent = StandIn(home, repo, "victim")
    relay_status(home)
    yield agent
    agent.stop()


@pytest.fixture
def db(victim: StandIn) -> Iterator[Store]:
    store = open_local()
    yield store
    store.close()


def attacks(victim: StandIn, repo: Path, elsewhere: Path) -> list[tuple[str, dict[str, Any]]]:
    """What another agent sends in the victim's name: a prompt (which would take the victim's
    pending deliveries), an edit and a claim, a cut-off, a move to another repository's lane,
    a wait on its behalf, its end."""
    sid = victim.sid
    target = str(repo / "src" / "victim.py")
    return [
        ("user-prompt-submit", claude("user-prompt-submit", sid, repo, prompt="as the victim")),
        (
            "post-tool-use",
            claude("post-tool-use", sid, repo, tool_name="Write", tool_input={"file_path": target}),
        ),
        (
            "pre-tool-use",
            claude("pre-tool-use", sid, repo, tool_name="Edit", tool_input={"file_path": target}),
        ),
        ("stop-failure", claude("stop-failure", sid, repo, error="rate_limit")),
        ("notification", claude("notification", sid, repo, notification_type="idle_prompt")),
        ("session-start", claude("session-start", sid, elsewhere, source="resume")),
        ("session-end", claude("session-end", sid, repo, reason="exit")),
    ]


@pytest.mark.parametrize(
    "claimed",
    ["null", "the victim's agent", "no such process"],
)
def test_an_event_through_the_socket_naming_another_session_is_refused_whatever_pid_it_claims(
    home: Path, repo: Path, tmp_path: Path, victim: StandIn, db: Store, claimed: str
):
    pid = {"null": None, "the victim's agent": victim.pid, "no such process": NO_SUCH_PROCESS}
    me = db.get_session(victim.sid)
    assert me is not None and me.agent_pid == victim.pid  # bound at its SessionStart
    asker = sessions.register(db, "asker", agent="codex", cwd=str(repo)).session
    asked = actions.ask(db, asker, "Which port?", to=me.handle)
    actions.claim(db, me, ["src/mine.py"])
    before = snapshot(db)
    elsewhere = make_repo(tmp_path / "elsewhere")
    sent = attacks(victim, repo, elsewhere)
    replies = [send(forged(event, payload, pid[claimed])) for event, payload in sent]
    # Refused (the hook behind such a request would fail open: no output)...
    applied = [e for (e, _), r in zip(sent, replies, strict=True) if not r or "error" not in r]
    assert applied == []
    assert refusals(home) == len(sent)
    # ... and nothing changed: not its prompt, edit, claim, cut-off, lane or end; the question
    # addressed to it is still pending for it.
    assert snapshot(db) == before
    assert [o.id for o in delivery.pending_for(db, me)] == [asked.id]


def ask_from_a_child(record: dict[str, Any], home: Path) -> dict[str, Any] | None:
    """Send ``record`` from a child of this process: a hook of the agent this process is."""
    script = (
        "import json, sys\n"
        "from colony_tasks.relay import wire\n"
        "reply = wire.ask(wire.socket_path(wire.LOCAL_KEY), json.loads(sys.argv[1]), 10)\n"
        "print(json.dumps(reply))\n"
    )
    done = subprocess.run(
        [str(EXE.parent / "python"), "-c", script, json.dumps(record)],
        capture_output=True,
        text=True,
        env={**os.environ, "COLONY_TASKS_HOME": str(home)},
        check=True,
    )
    return json.loads(done.stdout)


def test_a_request_from_the_sessions_own_agent_is_applied_whatever_pid_it_claims(
    home: Path, repo: Path, victim: StandIn, db: Store
):
    """The control: this test process is the agent of session "mine" (its hooks are this
    process's children); a child of it is believed with no pid, and a lie about the pid is
    replaced by what the kernel says."""
    started = subprocess.run(
        [str(EXE), "hook", "session-start"],
        input=json.dumps(claude("session-start", "mine", repo)).encode(),
        capture_output=True,
        env={**os.environ, "COLONY_TASKS_HOME": str(home)},
    )
    assert started.returncode == 0
    mine = db.get_session("mine")
    assert mine is not None and mine.agent_pid == os.getpid()
    for n, pid in enumerate((None, victim.pid, NO_SUCH_PROCESS)):
        payload = claude("user-prompt-submit", "mine", repo, prompt=f"mine {n}")
        reply = ask_from_a_child(forged("user-prompt-submit", payload, pid), home)
        assert reply is not None and "error" not in reply, reply
    task = db.tasks_of_session(mine.id)[0]
    prompts = [o.text for o in db.timeline(task.id, kinds=["prompt"])]
    assert prompts == ["mine 0", "mine 1", "mine 2"]
    assert db.get_session("mine").agent_pid == os.getpid()
    assert db.get_session(victim.sid).agent_pid == victim.pid


# -- the victim's wake wait ---------------------------------------------------------------------


def steal(home: Path, repo: Path, victim: StandIn, attempt: str) -> subprocess.Popen | None:
    """One attempt on the victim's wait; the thief's own ``hook wait`` process, if any."""
    if attempt == "hook wait":  # the product's command, this process as the thief's agent
        payload = home.parent / "stolen-stop.json"
        payload.write_text(json.dumps(claude("stop", victim.sid, repo)))
        with payload.open("rb") as stdin:
            return subprocess.Popen(
                [str(EXE), "hook", "wait", "--agent", "claude"],
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, "COLONY_TASKS_HOME": str(home)},
            )
    pid = {"null": None, "victim's pid": victim.pid, "made-up pid": NO_SUCH_PROCESS}
    if attempt == "closing":  # "the victim's agent is shutting down"
        reply = send({"op": "closing", "pid": victim.pid})
    else:
        wait = {"op": "wait", "session": victim.sid, "pid": pid[attempt.split(" ", 1)[1]]}
        reply = send({**wait, "for": 1})  # a wait in its name (it would last 1 s)
    assert reply is not None and not reply.get("wake")
    return None


@pytest.mark.parametrize(
    "attempt", ["wait null", "wait victim's pid", "wait made-up pid", "closing", "hook wait"]
)
def test_another_agent_cannot_take_over_or_end_a_sessions_wake_wait(
    home: Path, repo: Path, attempt: str
):
    """Claude Code's background ``hook wait`` of the victim holds a wait in the relay. Another
    agent sends a wait or a "closing" in its name through the socket, or runs the product's own
    ``colony-tasks hook wait`` with the victim's session id: the question then addressed to
    the victim still wakes the victim, and only it."""
    victim = StandIn(home, repo, "victim", wait=True)
    thief = None
    try:
        relay_status(home)
        wait_held(victim.sid, timeout=20)
        thief = steal(home, repo, victim, attempt)
        if thief is not None:
            assert thief.wait(timeout=20) == 0  # refused at once: it holds nothing
        assert not victim.wait_done(), "another agent ended the victim's wait"
        store = open_local()
        try:
            asker = sessions.register(store, "asker", agent="codex", cwd=str(repo)).session
            actions.ask(store, asker, "Which port does the API use?", to="claude")
        finally:
            store.close()
        code, err = victim.waited()
    finally:
        victim.stop()
        if thief is not None and thief.poll() is None:
            thief.kill()
    assert (code, "Which port does the API use?" in err) == (2, True)
    if thief is not None:
        out, err = thief.communicate(timeout=10)
        assert (out, err) == (b"", b"")
    if attempt != "closing":  # a closing acts for the sender's own agent: nothing to refuse
        assert refusals(home) == 1  # the attempt in the victim's name is logged


# -- team mode: the reply to a spooled event ------------------------------------------------------


def test_in_team_mode_the_reply_to_a_spooled_event_goes_only_to_its_own_agents_client(home: Path):
    """A hook spools its event, then asks the relay for the reply by row id. Another agent's
    client asking for that row id (ids count up) gets nothing, and the reply — what the event
    delivered to its session — waits for the row's own hook."""
    from colony_tasks.relay.team import TeamRelay

    relay = TeamRelay("postgresql://nobody@127.0.0.1:9/none")  # never connects: no worker
    victim_agent, thief_agent = 4242, 4343
    row_id = relay.outbox.put(
        "k", "user-prompt-submit", "claude", {}, session_id="victim", agent_pid=victim_agent
    )
    relay._answer(relay.outbox.pending()[0], {"context": "for the victim: the port is 8443"})
    thief = relay.reply_for(row_id, "user-prompt-submit", "victim", [9001, thief_agent])
    own = relay.reply_for(row_id, "user-prompt-submit", "victim", [9002, victim_agent])
    relay.outbox.close()
    assert thief == {}
    assert own == {"context": "for the victim: the port is 8443"}
    assert refusals(home) == 1
