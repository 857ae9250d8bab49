"""Delta per turn for the clients beside Claude Code, each with its real CLI, offline.

A session's next prompt carries what another session did since its last one. Their one-shot
modes end the process with the turn, so the next prompt is the same session resumed, as a
user continues it (``codex exec resume --last``, ``gemini --resume latest``, ``qwen
--continue``, ``copilot --continue``, ``opencode run --continue``); meanwhile another session
records a decision on the lane.
"""

from __future__ import annotations

import pytest

from colony_tasks.base.agent_events import event_name
from colony_tasks.domain import sessions
from colony_tasks.store import Store
from colony_tasks.usecases import actions

from .capabilities import record
from .model_server import context, say
from .scenarios import CODEX, COPILOT, GEMINI, OPENCODE, QWEN, Client

pytestmark = pytest.mark.agents

DECISION = "Prices stay in cents from now on."
DELTA_HEAD = "colony-tasks — since your last turn"


def decide(sandbox) -> None:
    """Another session (a Claude Code one) joins the lane and records :data:`DECISION`."""
    store = Store(sandbox.data / "colony.db")
    sessions.register(store, "claude-decider", agent="claude", cwd=str(sandbox.repo))
    actions.record_decision(store, "claude-decider", DECISION)
    store.close()


@pytest.mark.parametrize("client", [CODEX, GEMINI, QWEN, COPILOT, OPENCODE], ids=lambda c: c.agent)
def test_a_resumed_sessions_next_prompt_carries_what_another_session_did(sandbox, client: Client):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install(client.agent)
    runner = getattr(sandbox, client.agent)
    first_model = client.server([say("Ready.")])
    with first_model:
        runner(first_model, "Look after prices.py").finish()
    session = sandbox.session(client.agent)

    decide(sandbox)

    second_model = client.server([say("Noted.")])
    with second_model:
        run = runner(second_model, "What changed?", resume=True).finish()

    assert all(DECISION not in context(body) for body in first_model.main_requests())
    second = context(second_model.main_requests()[0])
    assert "What changed?" in second, run.output[-2000:]
    assert second.count(DECISION) == 1, run.output[-2000:]
    assert DELTA_HEAD in second
    assert sandbox.session(client.agent)["id"] == session["id"]  # the same session, resumed
    assert sandbox.hook_log() == ""
    hook = event_name("user-prompt-submit", client.agent)
    record(client.agent, sandbox.toolchain.version(client.agent), "delta", f"yes: {hook} context")
