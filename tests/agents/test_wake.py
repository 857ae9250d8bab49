"""Wake on message with the real agents.

- Claude Code: a session whose turn ended idles (stream-json input kept open: it waits for its
  next message as an interactive session waits for its human). Its background Stop handler
  (``hook wait``, ``"async": true, "asyncRewake": true``) holds a wait in the relay; a question
  addressed to it wakes it, and its next model request carries the question — once. Timed from
  the ask's commit to the woken model request, over several wakes of one session.
- Codex: a session about to stop with an urgent question pending is kept working once (its Stop
  hook answers ``decision: block``), reads the question as its next prompt and stops after;
  with only chatter pending it stops at once.
- No wait process is left once a session has ended.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from pathlib import Path

import pytest

from colony_tasks.store import Store, open_store
from colony_tasks.usecases import actions

from .capabilities import record
from .model_server import MessagesServer, ResponsesServer, Step, call, context, say, search_tools
from .sandbox import Sandbox

pytestmark = pytest.mark.agents

RUNS = 5
WAKE_LINE = "Hook Stop (Stop) error: status code 2\\nstderr:\\ncolony-tasks — for you now:"
QUESTION = "Which port does the payments API listen on? (ask {n})"


def _store(sandbox: Sandbox) -> Store:
    return open_store(str(sandbox.data / "colony.db"))


def _session(store: Store, agent: str) -> tuple[str, str]:
    row = store._one("SELECT id, handle FROM sessions WHERE agent = ?", (agent,))
    assert row is not None, f"no {agent} session"
    return row[0], row[1]


def _until(what: str, check, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _held(sandbox: Sandbox, agent: str) -> bool:
    if not (sandbox.data / "colony.db").exists():
        return False
    store = _store(sandbox)
    try:
        row = store._one("SELECT wake_since FROM sessions WHERE agent = ?", (agent,))
        return bool(row and row[0] is not None)
    finally:
        store.close()


def wait_processes(sandbox: Sandbox) -> list[int]:
    """Live ``colony-tasks hook wait`` processes of this sandbox, from the process table."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            environ = Path(f"/proc/{name}/environ").read_bytes()
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        ours = str(sandbox.data).encode() in environ
        if ours and b"hook" in cmdline and b"wait" in cmdline and state != "Z":
            found.append(int(name))
    return found


def _ask(sandbox: Sandbox, to: str, text: str, *, urgent: bool = False) -> float:
    """Ask as a human at the CLI would (another process's connection); when it committed."""
    store = _store(sandbox)
    try:
        actions.as_human(
            store,
            "dana",
            str(sandbox.repo),
            lambda me: actions.ask(store, me, text, to=to, urgent=urgent),
        )
        return time.perf_counter()
    finally:
        store.close()


def test_an_idle_claude_session_is_woken_by_a_question_and_reads_it_once(sandbox: Sandbox):
    sandbox.write("pay.py", "PORT = 0\n")
    sandbox.commit()
    sandbox.install("claude")
    model = MessagesServer([say("Ready."), *[say(f"It is 80{n}.") for n in range(RUNS)]])
    latencies: list[float] = []
    with model:
        claude = sandbox.claude_session(model, "Look after pay.py")
        model.script[0].wait_reached("Claude's first request")
        store = _store(sandbox)
        _, handle = _session(store, "claude")
        store.close()
        for n in range(RUNS):
            _until(f"the wait of turn {n}", lambda: _held(sandbox, "claude"))
            asked = _ask(sandbox, handle, QUESTION.format(n=n))
            step = model.script[n + 1]
            reached = threading.Event()
            stamp: list[float] = []

            def watch(step=step, reached=reached, stamp=stamp) -> None:
                step.reached.wait(120)
                stamp.append(time.perf_counter())
                reached.set()

            threading.Thread(target=watch, daemon=True).start()
            assert reached.wait(120), f"Claude was not woken by ask {n}"
            latencies.append(stamp[0] - asked)
            woken = context(step.request or {})
            assert QUESTION.format(n=n) in woken
        last = model.main_requests()[-1]
        for n in range(RUNS):  # each question reached the model once (and stays in history)
            assert context(last).count(QUESTION.format(n=n)) == 1
        claude.finish()
    _until("the waits to end", lambda: not wait_processes(sandbox), timeout=20)
    print(
        f"wake latency over {RUNS} wakes: p50 {statistics.median(latencies) * 1000:.0f} ms,"
        f" all {[round(x * 1000) for x in latencies]} ms"
    )
    woken_text = context(model.script[1].request or {})
    at = woken_text.find(QUESTION.format(n=0))
    print("woken request (trimmed):", woken_text[max(0, at - 600) : at + 200])
    assert sandbox.hook_log() == ""
    # Claude Code logs each wake (a background Stop handler's exit 2) as a hook error: one per
    # question, and nothing else. At exit it gives background handlers 30 s and then kills
    # them (status 137): the wait ended before, as the MCP server told the relay.
    wakes = [line for line in claude.hook_problems() if WAKE_LINE in line]
    assert len(wakes) == RUNS, wakes
    assert [line for line in claude.hook_problems() if WAKE_LINE not in line] == []
    woken_by = "yes: background Stop hook (asyncRewake)"
    record("claude", sandbox.toolchain.version("claude"), "wake_idle", woken_by)


CODEX_QUESTION = "Does the refund endpoint need the idempotency key?"
CLAUDE_ANSWER = "Yes: send Idempotency-Key on every POST /refunds."


def test_a_codex_question_wakes_idle_claude_and_its_answer_reaches_codex(sandbox: Sandbox):
    """Codex asks through its MCP tool; the idle Claude session is woken, answers through its
    MCP tool, and the answer reaches Codex's next tool result, once."""
    sandbox.write("refunds.py", "KEY = None\n")
    sandbox.commit()
    sandbox.install("claude")
    sandbox.install("codex")
    answered = threading.Event()
    handles: dict[str, str] = {}

    def question_id() -> int:
        (question,) = sandbox.lane_task()["questions"]
        return question["id"]

    claude_model = MessagesServer(
        [
            say("Ready."),
            call("ToolSearch", query="select:mcp__colony-tasks__answer_question"),
            Step(
                tool="mcp__colony-tasks__answer_question",
                args=lambda: {"question_id": question_id(), "answer": CLAUDE_ANSWER},
            ),
            say("Answered."),
        ]
    )
    codex_model = ResponsesServer(
        [
            search_tools("colony-tasks ask a question in the thread"),
            Step(
                tool="ask_question",
                namespace="mcp__colony_tasks",
                args=lambda: {"question": CODEX_QUESTION, "to": handles["claude"]},
            ),
            call("exec_command", cmd="git status --short"),
            say("Thanks."),
        ]
    )
    codex_model.script[2].gate = answered
    with claude_model, codex_model:
        claude = sandbox.claude_session(claude_model, "Own the refunds module")
        _until("Claude idle with its wait held", lambda: _held(sandbox, "claude"))
        store = _store(sandbox)
        handles["claude"] = _session(store, "claude")[1]
        store.close()
        codex = sandbox.codex(codex_model, "Add refunds to the client")
        woken = claude_model.script[1].wait_reached("Claude woken by Codex's question")
        claude_model.script[3].wait_reached("Claude's request after answering")
        answered.set()
        codex.finish()
        claude.finish()
    assert context(woken).count(CODEX_QUESTION) == 1
    codex_requests = codex_model.main_requests()
    after_answer = context(codex_requests[3])
    assert after_answer.count(CLAUDE_ANSWER) == 1, after_answer[-1500:]
    assert CLAUDE_ANSWER not in context(codex_requests[2])
    assert sandbox.hook_log() == ""
    assert codex.hook_problems() == []
    assert [line for line in claude.hook_problems() if WAKE_LINE not in line] == []
    record("codex", sandbox.toolchain.version("codex"), "mid_turn", "yes: with a tool's result")
    _until("the waits to end", lambda: not wait_processes(sandbox), timeout=20)


def test_a_claude_session_ended_while_waiting_leaves_no_process(sandbox: Sandbox):
    sandbox.install("claude")
    model = MessagesServer([say("Ready.")])
    with model:
        claude = sandbox.claude_session(model, "Stand by")
        _until("the wait", lambda: _held(sandbox, "claude"))
        assert wait_processes(sandbox), "no wait process while the session idles"
        claude.finish()  # its input closes: the session ends (SessionEnd)
    _until("the wait to end with its session", lambda: not wait_processes(sandbox), 20)
    assert not _held(sandbox, "claude")


def test_a_killed_claude_session_leaves_no_wait_process(sandbox: Sandbox):
    sandbox.install("claude")
    model = MessagesServer([say("Ready.")])
    with model:
        claude = sandbox.claude_session(model, "Stand by")
        _until("the wait", lambda: _held(sandbox, "claude"))
        claude.process.kill()  # no SessionEnd: the agent is simply gone
        claude.process.communicate()
    _until("the wait to end with its agent", lambda: not wait_processes(sandbox), 20)


def test_codex_about_to_stop_with_an_urgent_question_is_kept_working_once(sandbox: Sandbox):
    sandbox.install("codex")
    posted = threading.Event()
    model = ResponsesServer([say("All done.", gate=posted), say("Port 8443.")])
    with model:
        codex = sandbox.codex(model, "Check the payments config")
        model.script[0].wait_reached("Codex's first request")
        _ask(sandbox, "codex", "Which port for payments? Answer now.", urgent=True)
        posted.set()
        codex.finish()
    requests = model.main_requests()
    held = context(requests[-1])
    at = held.rfind("Which port for payments?")
    print("\nCodex's request after its held stop (trimmed):", held[max(0, at - 200) : at + 400])
    assert len(requests) == 2, [context(r)[-300:] for r in requests]
    assert "Which port for payments?" not in context(requests[0])
    assert context(requests[1]).count("Which port for payments?") == 1
    assert codex.hook_problems() == []
    assert sandbox.hook_log() == ""
    # Not an idle session but one about to stop, held by its Stop hook: the idle case (a
    # thread on Codex's app-server daemon) is test_codex_wake's cell.


def test_codex_with_only_chatter_pending_stops_at_once(sandbox: Sandbox):
    sandbox.install("codex")
    posted = threading.Event()
    model = ResponsesServer([say("All done.", gate=posted), say("Should not be asked.")])
    with model:
        codex = sandbox.codex(model, "Check the payments config")
        model.script[0].wait_reached("Codex's first request")
        store = _store(sandbox)
        actions.as_human(
            store, "dana", str(sandbox.repo), lambda me: actions.post(store, me, "FYI: lunch")
        )
        _ask(sandbox, "codex", "Not urgent: which port?")
        store.close()
        posted.set()
        codex.finish()
    assert len(model.main_requests()) == 1
    assert codex.hook_problems() == []
