"""Capability cells the other agents tests do not measure, each asserted with a real CLI.

- Characters per turn for Gemini CLI and Qwen Code on the scenario every client is measured
  on (:func:`.scenarios.other_edits_after_claude`: the edit that meets Claude's change).
- Delta per turn for Claude Code: a second prompt to an open session carries what another
  session did in between (the other clients: ``test_client_delta.py``).
- Mid-turn delivery for Gemini CLI and Qwen Code: a question Claude asks reaches the session
  waiting in a shell command, with that command's result.
"""

from __future__ import annotations

import pytest

from colony_tasks.base.agent_events import event_name
from colony_tasks.store import Store
from colony_tasks.usecases import actions

from . import scenarios
from .capabilities import record
from .model_server import MessagesServer, context, say
from .scenarios import GEMINI, QUESTION, QWEN, chars_per_turn, warning
from .test_lifecycle import held_by_another

pytestmark = pytest.mark.agents

DECISION = "Prices stay in cents from now on."


@pytest.mark.parametrize("client", [GEMINI, QWEN], ids=lambda c: c.agent)
def test_a_client_editing_the_line_claude_just_changed_is_measured(sandbox, client):
    pair = scenarios.other_edits_after_claude(sandbox, client)

    requests = pair.other_model.main_requests()
    assert pair.held in context(requests[0]), f"{client.label}'s briefing does not name Claude"
    assert context(requests[-1]).count(warning("prices.py", "L1", pair.held)) == 1
    assert (sandbox.repo / "prices.py").read_text() == "TAX = 0.21\n"
    chars = chars_per_turn(requests)
    assert chars > 0
    record(client.agent, sandbox.toolchain.version(client.agent), "chars_per_turn", chars)


def test_claudes_second_prompt_carries_what_another_session_did_meanwhile(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("claude")
    model = MessagesServer([say("Ready."), say("Noted.")])
    with model:
        claude = sandbox.claude_session(model, "Look after prices.py")
        first = context(model.script[0].wait_reached("Claude's first request"))
        held_by_another(sandbox, "prices.py")  # registers the session that decides
        store = Store(sandbox.data / "colony.db")
        actions.record_decision(store, "codex-holder", DECISION)
        store.close()
        claude.send("What changed?")
        second = context(model.script[1].wait_reached("Claude's second request"))
        claude.finish()

    assert DECISION not in first
    assert second.count(DECISION) == 1
    record("claude", sandbox.toolchain.version("claude"), "delta", "yes: UserPromptSubmit context")


@pytest.mark.parametrize("client", [GEMINI, QWEN], ids=lambda c: c.agent)
def test_a_question_from_claude_reaches_the_client_mid_turn(sandbox, client):
    pair = scenarios.question_from_claude(sandbox, client)

    first, after_shell = pair.other_model.main_requests()[:2]
    assert QUESTION not in context(first)
    assert context(after_shell).count(QUESTION) == 1
    hook = event_name("post-tool-use", client.agent)
    record(
        client.agent, sandbox.toolchain.version(client.agent), "mid_turn", f"yes: {hook} context"
    )
