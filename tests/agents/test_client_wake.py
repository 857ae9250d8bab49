"""Waking Gemini CLI, Qwen Code and Copilot CLI sessions, with their real CLIs, offline.

Their hooks run only while a turn runs, and what a hook started in the background says never
reaches the session. An idle Copilot CLI session is woken by our extension instead
(test_copilot_wake.py), an idle Qwen Code session through its own cross-session inbox
(test_qwen_wake.py); Gemini CLI sessions are not woken while they idle (its own code says so:
:func:`idle_wake_blocker`).
What all three can do is Codex's stop gate: a session whose turn ends
(Gemini CLI's AfterAgent, Qwen Code's Stop, Copilot CLI's agentStop) with an urgent item
pending is kept working once; the item is its next prompt. With only chatter pending it stops
at once.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from colony_tasks.store import Store, open_store
from colony_tasks.usecases import actions

from .capabilities import record
from .model_server import context, say
from .sandbox import Sandbox
from .scenarios import COPILOT, GEMINI, QWEN, Client

pytestmark = pytest.mark.agents

QUESTION = "Which port for payments? Answer now."
CLIENTS = [GEMINI, QWEN, COPILOT]


def _store(sandbox: Sandbox) -> Store:
    return open_store(str(sandbox.data / "colony.db"))


def _ask(sandbox: Sandbox, to: str, text: str, *, urgent: bool = False) -> None:
    """Ask as a human at the CLI would (another process's connection)."""
    store = _store(sandbox)
    try:
        actions.as_human(
            store,
            "dana",
            str(sandbox.repo),
            lambda me: actions.ask(store, me, text, to=to, urgent=urgent),
        )
    finally:
        store.close()


def _recipient_state(sandbox: Sandbox) -> tuple[str, str | None]:
    store = _store(sandbox)
    try:
        row = store._one(
            "SELECT r.state, r.via FROM recipients r JOIN observations o"
            " ON o.id = r.observation_id WHERE o.text LIKE ?",
            (f"%{QUESTION}%",),
        )
        assert row is not None, "the question has no recipient"
        return row[0], row[1]
    finally:
        store.close()


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.agent)
def test_about_to_stop_with_an_urgent_question_is_kept_working_once(
    sandbox: Sandbox, client: Client
):
    sandbox.install(client.agent)
    posted = threading.Event()
    model = client.server([say("All done.", gate=posted), say("Port 8443.")])
    with model:
        run = getattr(sandbox, client.agent)(model, "Check the payments config")
        model.script[0].wait_reached(f"{client.label}'s first request")
        _ask(sandbox, client.agent, QUESTION, urgent=True)
        posted.set()
        run.finish()
    requests = model.main_requests()
    held = context(requests[-1])
    at = held.rfind(QUESTION)
    print(f"\n{client.label}'s request after its held stop:", held[max(0, at - 200) : at + 400])
    assert len(requests) == 2, [context(r)[-300:] for r in requests]
    assert QUESTION not in context(requests[0])
    assert context(requests[1]).count(QUESTION) == 1
    assert "an urgent item arrived as you were stopping" in context(requests[1])
    assert _recipient_state(sandbox) == ("delivered", "stop")
    assert run.hook_problems() == []
    assert sandbox.hook_log() == ""
    if client.agent in BLOCKERS:
        version = sandbox.toolchain.version(client.agent)
        blocker = idle_wake_blocker(sandbox, client)
        cell = f"partly: a stopping session is kept working once; {blocker}"
        record(client.agent, version, "wake_idle", cell)


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.agent)
def test_with_only_chatter_pending_it_stops_at_once(sandbox: Sandbox, client: Client):
    sandbox.install(client.agent)
    posted = threading.Event()
    model = client.server([say("All done.", gate=posted), say("Should not be asked.")])
    with model:
        run = getattr(sandbox, client.agent)(model, "Check the payments config")
        model.script[0].wait_reached(f"{client.label}'s first request")
        store = _store(sandbox)
        actions.as_human(
            store, "dana", str(sandbox.repo), lambda me: actions.post(store, me, "FYI: lunch")
        )
        store.close()
        _ask(sandbox, client.agent, "Not urgent: which port?")
        posted.set()
        run.finish()
    assert len(model.main_requests()) == 1
    assert run.hook_problems() == []


# --- why an idle session cannot be woken: each client's own installed code -----------------


def _read_all(folder: Path, pattern: str = "*.js") -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(folder.glob(pattern)))


def _gemini_blocker(sandbox: Sandbox) -> str:
    """Gemini CLI's hook definition (its settings schema) has no background option: every hook
    runs inside the turn and the turn waits for it."""
    bundle = Path(sandbox.toolchain.gemini).resolve().parent
    code = _read_all(bundle)
    schema = re.search(r"HookDefinitionArray: \{.*?\n  \},\n", code, re.S)
    assert schema, "Gemini CLI's settings schema no longer defines HookDefinitionArray"
    fields = set(re.findall(r"^ {14}(\w+): \{", schema.group(0), re.M))
    assert {"command", "timeout"} <= fields, fields
    assert not fields & {"async", "background", "asyncRewake"}, fields
    return "an idle one is not woken (no background hooks: every hook runs inside a turn)"


#: Copilot CLI and Qwen Code have none: their idle sessions are woken (test_copilot_wake.py,
#: test_qwen_wake.py).
BLOCKERS = {"gemini": _gemini_blocker}


def idle_wake_blocker(sandbox: Sandbox, client: Client) -> str:
    """Why an idle ``client`` session cannot be woken, established from its installed code."""
    return BLOCKERS[client.agent](sandbox)


@pytest.mark.parametrize(
    "client", [c for c in CLIENTS if c.agent in BLOCKERS], ids=lambda c: c.agent
)
def test_what_could_reach_an_idle_session_is_read_from_the_clients_code(
    sandbox: Sandbox, client: Client
):
    assert idle_wake_blocker(sandbox, client).startswith("an idle one is not woken")
