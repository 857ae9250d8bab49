"""Waking an idle session: what wakes, exactly once, the sender told, Codex's stop gate, and
Claude Code's background wait as a real hook process served by the real relay."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from colony_tasks.domain import wake
from colony_tasks.render import briefing
from colony_tasks.store import Store, open_local
from colony_tasks.usecases import actions, events
from colony_tasks.usecases.events import Event
from tests.support.contracts import check_codex
from tests.support.helpers import join, wait_held
from tests.support.hookrun import EXE, claude, codex, relay_status, run_hook

# -- the core rule --------------------------------------------------------------------------


@pytest.fixture
def lane(tmp_path: Path, repo: Path, home: Path):
    store = open_local()
    idle = join(store, "idle-1", "claude", repo).session
    asker = join(store, "asker-1", "codex", repo).session
    yield store, idle, asker
    store.close()


def test_a_question_addressed_to_a_session_wakes_it_once_and_its_next_hook_does_not_repeat_it(
    lane, repo: Path
):
    store, idle, asker = lane
    asked = actions.ask(store, asker, "Which port does the API use?", to=idle.handle)
    assert wake.ready(store, [idle.id, asker.id]) == {idle.id: False}
    woken = wake.claim(store, idle.id)
    assert [o.id for o in woken] == [asked.id]
    assert "Which port does the API use?" in briefing.wake_text(store, idle.id, woken)
    assert wake.claim(store, idle.id) == [] and wake.ready(store, [idle.id]) == {}
    after = events.prompt(store, Event(idle.id, "claude", str(repo)), "carry on")
    assert asked.id not in [o.id for u in after.updates for o in u.items]
    assert "Which port" not in (briefing.render(store, after)[0] or "")


def test_chatter_does_not_wake_but_an_urgent_post_to_the_lane_does(lane):
    store, idle, asker = lane
    actions.post(store, asker, "I am refactoring the checkout module.")
    actions.record_decision(store, asker, "We keep the REST API.")
    actions.ask(store, asker, "Anyone know the port?")  # broadcast, not urgent
    assert wake.ready(store, [idle.id]) == {}
    urgent = actions.post(store, asker, "Release freeze: stop editing.", urgent=True)
    assert [o.id for o in wake.claim(store, idle.id)] == [urgent.id]


def test_a_handoff_and_an_interface_notice_wake_their_recipient(lane):
    store, idle, asker = lane
    handed = actions.hand_off(store, asker, "Take over the parser.", to=idle.handle)
    notice = store.add_observation(
        "interface", "api.py: def serve(port) changed", session_id=asker.id, task_id=handed.task_id
    )
    store.add_recipients(notice, [idle.id])
    assert [o.id for o in wake.claim(store, idle.id)] == [handed.id, notice]


def test_an_ended_recipient_is_reported_so_its_wait_ends(lane):
    store, idle, asker = lane
    from colony_tasks.domain import sessions

    sessions.end_session(store, idle)
    assert wake.ready(store, [idle.id]) == {idle.id: True}


def test_the_sender_is_told_its_item_woke_the_recipient_once(lane, repo: Path):
    store, idle, asker = lane
    store.set_wake_since(idle.id, store.now())
    asked = actions.ask(store, asker, "Port?", to=idle.handle)
    assert [r["handle"] for r in asked.recipients] == [idle.handle]
    assert wake.recipient_status(store, store.get_observation(asked.id), asked.recipients[0]) == (
        "waking"
    )
    wake.claim(store, idle.id)
    first = events.prompt(store, Event(asker.id, "codex", str(repo)), "next")
    assert [(r["observation_id"], r["via"]) for r in first.woken] == [(asked.id, "wake")]
    text = briefing.render(store, first)[0] or ""
    assert f"#{asked.id} question woke {idle.handle}" in text
    again = events.prompt(store, Event(asker.id, "codex", str(repo)), "again")
    assert again.woken == () and "woke" not in (briefing.render(store, again)[0] or "")
    row = store.recipients(asked.id)[0]
    assert wake.recipient_status(store, store.get_observation(asked.id), row) == "woke"


def test_the_mcp_result_and_the_cli_line_say_the_recipient_is_being_woken(
    lane, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    from click.testing import CliRunner

    from colony_tasks.cli import cli
    from colony_tasks.mcp_server.models import posted

    store, idle, asker = lane
    store.set_wake_since(idle.id, store.now())
    result = posted(actions.ask(store, asker, "Port?", to=idle.handle))
    assert result.delivery == {idle.handle: "pending"}
    assert result.reach == {idle.handle: "waking"}
    monkeypatch.chdir(repo)
    line = CliRunner().invoke(
        cli, ["post", "1", "Schema frozen?", "--kind", "question", "--to", idle.handle]
    )
    assert f"{idle.handle} (pending, waking)" in line.output, line.output


def test_recipient_status_says_next_turn_for_a_busy_session_and_ended_for_an_ended_one(lane):
    store, idle, asker = lane
    asked = actions.ask(store, asker, "Port?", to=idle.handle)
    obs = store.get_observation(asked.id)
    (row,) = store.recipients(asked.id)
    assert wake.recipient_status(store, obs, row) == "next turn"
    from colony_tasks.domain import sessions

    sessions.end_session(store, idle)
    (row,) = store.recipients(asked.id)
    assert wake.recipient_status(store, obs, row).startswith("ended")


def test_waking_can_be_turned_off_for_the_user_or_for_one_repository(lane, home: Path, repo):
    store, idle, _ = lane
    assert wake.enabled(store, idle)
    (home / "settings.json").write_text(json.dumps({"wake": {"off_repos": [str(repo)]}}))
    assert not wake.enabled(store, idle)
    (home / "settings.json").write_text(json.dumps({"wake": {"off_repos": ["/elsewhere"]}}))
    assert wake.enabled(store, idle)
    (home / "settings.json").write_text(json.dumps({"wake": {"enabled": False}}))
    assert not wake.enabled(store, idle)


# -- the stop gate (Codex, Gemini CLI, Qwen Code, Copilot CLI) --------------------------------


def _stop(
    store: Store, session_id: str, repo: Path, active: bool, agent: str = "codex"
) -> str | None:
    """The reason a stop is held back (its next prompt), or None."""
    result = events.stop(store, Event(session_id, agent, str(repo)), active)
    return briefing.stop_reason(store, result)


@pytest.mark.parametrize("agent", ["gemini", "qwen", "copilot", "claude"])
def test_a_stop_is_gated_only_for_agents_whose_stop_hook_can_keep_them_working(
    tmp_path, repo, home, agent: str
):
    store = open_local()
    me = join(store, f"{agent}-1", agent, repo).session
    other = join(store, "cx-1", "codex", repo).session
    asked = actions.ask(store, other, "Is the schema final?", to=me.handle, urgent=True)
    reason = _stop(store, me.id, repo, False, agent)
    gated = agent in wake.STOP_GATED
    assert (reason is not None and "Is the schema final?" in reason) is gated
    assert (store.recipients(asked.id)[0]["via"] == "stop") is gated
    status = wake.annotate(store, asked.id, store.recipients(asked.id))[0]["wake"]
    assert status == ("kept from stopping" if gated else "next turn")
    store.close()


def _stop_notice(store: Store, session_id: str, repo: Path, active: bool) -> str | None:
    """What the human is told at a stop that leaves urgent items unread."""
    result = events.stop(store, Event(session_id, "codex", str(repo)), active)
    return briefing.render(store, result)[0]


def test_codex_stop_is_held_once_for_an_urgent_question_and_stops_after(tmp_path, repo, home):
    store = open_local()
    cx = join(store, "cx-1", "codex", repo).session
    other = join(store, "cc-1", "claude", repo).session
    asked = actions.ask(store, other, "Is the schema final?", to=cx.handle, urgent=True)
    reason = _stop(store, cx.id, repo, False)
    assert reason is not None and "Is the schema final?" in reason
    assert store.recipients(asked.id)[0]["via"] == "stop"
    assert _stop(store, cx.id, repo, True) is None  # nothing new: it stops
    assert store.stop_blocks(cx.id) == 0
    store.close()


def test_codex_stop_is_never_held_for_a_non_urgent_question(tmp_path, repo, home):
    store = open_local()
    cx = join(store, "cx-1", "codex", repo).session
    other = join(store, "cc-1", "claude", repo).session
    actions.ask(store, other, "Is the schema final?", to=cx.handle)
    actions.post(store, other, "just chatting")
    assert _stop(store, cx.id, repo, False) is None
    store.close()


def test_codex_stop_is_held_at_most_three_times_in_a_row(tmp_path, repo, home):
    store = open_local()
    cx = join(store, "cx-1", "codex", repo).session
    # Three senders: one sender's items hold a stop at most wake.PER_SENDER_PER_MINUTE times.
    senders = [join(store, f"cc-{n}", "claude", repo).session for n in range(3)]
    reasons = []
    for n in range(3):
        actions.post(store, senders[n], f"urgent {n}", urgent=True)
        reasons.append(_stop(store, cx.id, repo, n > 0))
    assert all(reasons) and "last time" in (reasons[2] or "")
    other = senders[0]
    actions.post(store, other, "urgent 3", urgent=True)
    # The fourth stop goes through; the human is told why an urgent item is left unread.
    notice = _stop_notice(store, cx.id, repo, True)
    assert notice is not None and "1 urgent item(s)" in notice and "3 times" in notice
    # The fourth urgent post waits for the next prompt, delivered then, once.
    nxt = events.prompt(store, Event(cx.id, "codex", str(repo)), "go on")
    assert [o.text for u in nxt.updates for o in u.items].count("urgent 3") == 1
    assert (briefing.render(store, nxt)[0] or "").count("urgent 3") == 1
    # A fresh stop (not following a held one) may be held again.
    actions.post(store, senders[1], "urgent 4", urgent=True)
    assert _stop(store, cx.id, repo, False) is not None
    store.close()


def test_the_codex_stop_hook_prints_a_block_its_schema_accepts(home: Path, repo: Path):
    run_hook("session-start", codex("session-start", "cx", repo), home, agent="codex")
    store = open_local()
    other = join(store, "cc-1", "claude", repo).session
    actions.ask(store, other, "Ship it today?", to="codex", urgent=True)
    store.close()
    result = run_hook("stop", codex("stop", "cx", repo, stop_hook_active=False), home)
    data = check_codex("stop", result.stdout)
    assert data is not None and data["decision"] == "block"
    assert "Ship it today?" in data["reason"]
    again = run_hook("stop", codex("stop", "cx", repo, stop_hook_active=True), home)
    assert again.stdout == "" and again.returncode == 0
    store = open_local()
    cx = store.get_session("cx")
    store.set_stop_blocks(cx.id, 3)  # held three times in a row, and one more is pending
    actions.ask(store, other, "And the changelog?", to="codex", urgent=True)
    store.close()
    capped = run_hook("stop", codex("stop", "cx", repo, stop_hook_active=True), home)
    notice = check_codex("stop", capped.stdout)
    assert notice is not None and set(notice) == {"systemMessage"}
    assert "wait for its next prompt" in notice["systemMessage"]


# -- Claude Code's background wait: real hook processes and the real relay -------------------


def _start_wait(home: Path, repo: Path, sid: str) -> subprocess.Popen:
    """``colony-tasks hook wait`` as Claude Code starts it at Stop, in the background."""
    payload = home.parent / f"stop-{sid}.json"
    payload.write_text(json.dumps(claude("stop", sid, repo, stop_hook_active=False)))
    with payload.open("rb") as stdin:
        return subprocess.Popen(
            [str(EXE), "hook", "wait", "--agent", "claude"],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "COLONY_TASKS_HOME": str(home)},
        )


def _gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True  # exited, not yet reaped by its new parent
        except FileNotFoundError:
            return True
        time.sleep(0.02)
    return False


def test_an_idle_claude_session_is_woken_by_a_question_and_told_nothing_twice(
    home: Path, repo: Path
):
    run_hook("session-start", claude("session-start", "cc", repo), home, agent="claude")
    relay_status(home)
    waiter = _start_wait(home, repo, "cc")
    wait_held("cc")
    assert relay_status(home)["waits"] == 1
    store = open_local()
    asker = join(store, "cx-1", "codex", repo).session
    idle = store.get_session("cc")
    asked = actions.ask(store, asker, "Which port does the API use?", to=idle.handle)
    assert [r["state"] for r in asked.recipients] == ["pending"]
    out, err = waiter.communicate(timeout=20)
    assert waiter.returncode == 2, err
    assert "Which port does the API use?" in err.decode()
    assert store.recipients(asked.id)[0]["via"] == "wake"
    store.close()
    # Its next turn does not repeat it.
    nxt = run_hook(
        "user-prompt-submit", claude("user-prompt-submit", "cc", repo, prompt="ok"), home
    )
    assert "Which port" not in nxt.stdout


def test_the_wait_ends_quietly_when_the_session_ends_or_resumes(home: Path, repo: Path):
    run_hook("session-start", claude("session-start", "cc", repo), home, agent="claude")
    relay_status(home)
    waiter = _start_wait(home, repo, "cc")
    wait_held("cc")
    run_hook("user-prompt-submit", claude("user-prompt-submit", "cc", repo, prompt="hi"), home)
    waiter.communicate(timeout=20)
    assert waiter.returncode == 0
    waiter = _start_wait(home, repo, "cc")
    wait_held("cc")
    run_hook("session-end", claude("session-end", "cc", repo, reason="exit"), home)
    out, err = waiter.communicate(timeout=20)
    assert (waiter.returncode, out, err) == (0, b"", b"")


def test_the_wait_does_not_outlive_its_agent_process(home: Path, repo: Path, tmp_path: Path):
    """A stand-in agent starts the wait and is killed: the wait process is gone soon after."""
    pid_file = tmp_path / "wait.pid"
    payload = json.dumps(claude("stop", "cc", repo, stop_hook_active=False))
    agent = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([{str(EXE)!r}, 'hook', 'wait', '--agent', 'claude'],"
        " stdin=subprocess.PIPE, start_new_session=True)\n"
        f"p.stdin.write({payload!r}.encode()); p.stdin.close()\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(600)\n"
    )
    # The session's agent is the stand-in: its SessionStart comes from it too.
    start = json.dumps(claude("session-start", "cc", repo))
    starter = (
        "import subprocess\n"
        f"subprocess.run([{str(EXE)!r}, 'hook', 'session-start', '--agent', 'claude'],"
        f" input={start!r}.encode())\n"
    )
    env = {**os.environ, "COLONY_TASKS_HOME": str(home)}
    fake = subprocess.Popen([sys.executable, "-c", starter + agent], env=env)
    deadline = time.monotonic() + 20
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the stand-in agent did not start its wait"
        time.sleep(0.02)
    wait_pid = int(pid_file.read_text())
    wait_held("cc")
    assert not _gone(wait_pid, 0.3)  # it waits while its agent lives
    fake.send_signal(signal.SIGKILL)
    fake.wait()
    assert _gone(wait_pid), "the wait outlived its agent"


# -- both backends: the rule's queries, and the relay's waits over a store with no counter ---

BOTH = pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)], indirect=True
)


@BOTH
def test_the_wake_queries_on_both_backends(store: Store, repo: Path):
    idle = join(store, "idle-1", "claude", repo).session
    asker = join(store, "asker-1", "codex", repo).session
    actions.post(store, asker, "chatter")
    asked = actions.ask(store, asker, "Port?", to=idle.handle)
    assert wake.ready(store, [idle.id, asker.id]) == {idle.id: False}
    assert [o.id for o in wake.claim(store, idle.id)] == [asked.id]
    store.unmark_delivered(idle.id, [asked.id])  # a woken client gone: back to pending
    assert [o.id for o in wake.claim(store, idle.id)] == [asked.id]
    rows = wake.woken(store, asker)
    assert [(r["observation_id"], r["via"], r["recipient_handle"]) for r in rows] == [
        (asked.id, "wake", idle.handle)
    ]
    assert briefing.woke(rows) == (
        f"colony-tasks: your items reached idle sessions:\n#{asked.id} question woke {idle.handle}"
    )
    assert wake.woken(store, asker) == ()  # told once
    store.set_stop_blocks(idle.id, 2)
    assert store.stop_blocks(idle.id) == 2
    from colony_tasks.domain import sessions

    sessions.end_session(store, idle)
    assert wake.ready(store, [idle.id]) == {idle.id: True}


@BOTH
def test_the_relays_waits_answer_a_wait_from_another_connection(
    store: Store, store_address: str, repo: Path
):
    """On PostgreSQL (no data_version) the waits ask the store at an interval; on SQLite when
    another connection committed. Either way a question from elsewhere ends the wait."""
    import threading

    from colony_tasks.domain import sessions
    from colony_tasks.relay.waits import Waits
    from colony_tasks.store import open_store

    # The wait's agent process is this one (the relay passes the one the kernel names).
    idle = sessions.register(
        store, "idle-1", agent="claude", cwd=str(repo), agent_pid=os.getpid()
    ).session
    asker = join(store, "asker-1", "codex", repo).session
    waits = Waits(lambda: store)
    replies: list[dict] = []
    holder = threading.Thread(
        target=lambda: replies.append(waits.hold({"session": idle.id}, None, agent=os.getpid()))
    )
    holder.start()
    deadline = time.monotonic() + 10
    while store.get_session(idle.id) is not None and not waits.waiters:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    other = open_store(store_address)
    try:
        asked = actions.ask(other, asker.id, "Port?", to=idle.handle)
    finally:
        other.close()
    holder.join(10)
    assert not holder.is_alive()
    (reply,) = replies
    assert reply["ids"] == [asked.id] and "Port?" in reply["wake"]
    assert store.recipients(asked.id)[0]["via"] == "wake"


def test_a_claude_in_print_mode_without_streaming_input_is_not_waited_for():
    """It exits as its turn ends; a wait would only hold its exit (30 s, then a kill)."""
    from colony_tasks.base.procs import command_line
    from colony_tasks.hooks import wait as wait_hook

    script = "import sys, time; time.sleep(30)"
    for args, wakeable in (
        (["-p", "hello"], False),
        (["--print", "hello", "--output-format", "json"], False),
        (["-p", "--input-format", "stream-json"], True),
        (["-p", "--input-format=stream-json"], True),
        (["--resume", "abc"], True),  # interactive
    ):
        agent = subprocess.Popen([sys.executable, "-c", script, *args])
        try:
            deadline = time.monotonic() + 10
            while script not in (command_line(agent.pid) or []):  # until it has exec'd
                assert time.monotonic() < deadline
                time.sleep(0.01)
            assert wait_hook.wakeable(agent.pid) is wakeable, args
        finally:
            agent.kill()
            agent.wait()


def test_a_copilot_wait_is_held_only_from_the_process_copilot_starts_for_an_extension(
    home: Path, repo: Path
):
    """A Copilot hook (``COPILOT_CLI=1``) runs inside a turn: a wait there would hold the turn.
    Only our extension, whose process Copilot marks, waits for a Copilot session."""
    payload = json.dumps({"session_id": "cp", "cwd": str(repo)}).encode()
    base = {**os.environ, "COLONY_TASKS_HOME": str(home)}
    base.pop("COPILOT_EXTENSION_PARENT_PID", None)
    for extra in ({}, {"COPILOT_CLI": "1", "COPILOT_EXTENSION_PARENT_PID": str(os.getpid())}):
        started = time.monotonic()
        done = subprocess.run(
            [str(EXE), "hook", "wait", "--agent", "copilot"],
            input=payload,
            capture_output=True,
            env={**base, **extra},
            timeout=20,
        )
        assert (done.returncode, done.stderr) == (0, b"")
        assert time.monotonic() - started < 10
    from colony_tasks.relay import wire

    assert not (home / f"relay-{wire.LOCAL_KEY}.sock").exists()  # it never asked the relay


def test_opencode_run_is_not_waited_for_its_server_and_tui_are():
    """``opencode run`` exits as its turn ends; ``opencode serve`` and the TUI idle."""
    from colony_tasks.hooks import wait as wait_hook

    launcher = ["node", "/x/node_modules/opencode-ai/bin/opencode"]
    for args, subcommand in (
        (["opencode", "run", "fix it"], "run"),
        ([*launcher, "run", "fix it"], "run"),
        (["/x/bin/opencode.exe", "serve", "--port", "4096"], "serve"),
        (["opencode"], ""),
        (["opencode", "--continue"], ""),
    ):
        assert wait_hook.subcommand(args) == subcommand, args
        assert wait_hook.runs_opencode(args)


def test_an_opencode_wait_whose_agent_is_not_opencode_is_not_held(tmp_path: Path):
    """The plugin starts the wait as OpenCode goes idle; when OpenCode exits meanwhile (the end
    of ``opencode run``), the agent process found for it is some other process: no wait."""
    from colony_tasks.hooks import wait as wait_hook

    assert not wait_hook.wakeable(os.getpid(), "opencode")  # this is pytest, not OpenCode
    launcher = tmp_path / "opencode"
    launcher.write_text("#!/bin/sh\nsleep 10\n")
    launcher.chmod(0o755)
    for subcommand, wakes in (("serve", True), ("run", False)):
        named = subprocess.Popen([str(launcher), subcommand])
        try:
            time.sleep(0.2)
            assert wait_hook.wakeable(named.pid, "opencode") is wakes, subcommand
        finally:
            named.kill()
            named.wait()
