"""Scenario 3: the agents call our MCP tools the way a model does, without passing session_id.

Codex starts first and waits; Claude starts (its briefing names Codex), loads our tools through
ToolSearch, claims a file and asks Codex a question, then waits. Codex finds answer_question
through its tool_search step and answers. Claude's next tool call brings the answer into its
context, and it is not delivered a second time.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import pytest

from .capabilities import record
from .model_server import MessagesServer, ResponsesServer, Step, call, context, say, search_tools
from .sandbox import Run, Sandbox

pytestmark = pytest.mark.agents

QUESTION = "Which port does the billing API listen on?"
ANSWER = "Port 8443, behind the TLS proxy."


@dataclass
class Outcome:
    box: Sandbox
    claude: Run
    codex: Run
    claude_requests: list[dict[str, Any]]

    @property
    def task(self) -> dict[str, Any]:
        return self.box.lane_task()


@pytest.fixture(scope="module")
def outcome(tmp_path_factory, toolchain):
    """The scenario runs once; the tests below check different parts of what happened."""
    box = Sandbox(tmp_path_factory.mktemp("mcp-tools"), toolchain)
    try:
        yield run_scenario(box)
    finally:
        box.stop_all()


def run_scenario(box: Sandbox) -> Outcome:
    box.write("api.py", "PORT = None\n")
    box.commit()
    box.install("claude")
    box.install("codex")
    codex_go, claude_go = threading.Event(), threading.Event()

    def question_id() -> int:
        (question,) = box.lane_task()["questions"]
        return question["id"]

    codex_model = ResponsesServer(
        [
            search_tools("colony-tasks answer a question in the thread"),
            Step(
                tool="answer_question",
                namespace="mcp__colony_tasks",
                args=lambda: {"question_id": question_id(), "answer": ANSWER},
            ),
            say("Answered."),
        ]
    )
    codex_model.script[0].gate = codex_go
    claude_model = MessagesServer(
        [
            call(
                "ToolSearch",
                query="select:mcp__colony-tasks__claim_file,mcp__colony-tasks__ask_question",
            ),
            call("mcp__colony-tasks__claim_file", paths=["api.py"]),
            Step(
                tool="mcp__colony-tasks__ask_question",
                args=lambda: {"question": QUESTION, "to": box.session("codex")["handle"]},
            ),
            call("Bash", command="true", description="Wait for the answer"),
            call("Bash", command="true", description="Carry on"),
            say("Done."),
        ]
    )
    claude_model.script[3].gate = claude_go
    with codex_model, claude_model:
        codex = box.codex(codex_model, "Help the others on this branch")
        codex_model.script[0].wait_reached("Codex's first request")
        claude = box.claude(claude_model, "Wire the billing API port")
        claude_model.script[3].wait_reached("Claude's request after ask_question")
        codex_go.set()
        codex.finish()
        claude_go.set()
        claude.finish()
    return Outcome(box, claude, codex, claude_model.main_requests())


def test_claudes_briefing_names_the_codex_session_already_there(outcome):
    codex_handle = outcome.box.session("codex")["handle"]
    assert codex_handle in context(outcome.claude_requests[0])


def test_mcp_calls_without_session_id_act_as_the_calling_agent(outcome):
    claude_id, codex_id = outcome.box.session("claude")["id"], outcome.box.session("codex")["id"]
    task = outcome.task
    claims = [o for o in task["timeline"] if o["kind"] == "claim"]
    assert [(c["session_id"], c["text"]) for c in claims] == [(claude_id, "claimed api.py for 60m")]
    (question,) = [o for o in task["timeline"] if o["kind"] == "question"]
    assert question["session_id"] == claude_id
    assert question["text"] == QUESTION
    assert question["to"] == outcome.box.session("codex")["handle"]
    answers = [o for o in task["timeline"] if o["kind"] == "answer"]
    assert [(a["session_id"], a["in_reply_to"], a["text"]) for a in answers] == [
        (codex_id, question["id"], ANSWER)
    ]
    versions = outcome.box.toolchain.version
    record("claude", versions("claude"), "mcp_tools", "yes: claim_file, ask_question")
    record("codex", versions("codex"), "mcp_tools", "yes: answer_question")


def test_the_answer_reaches_claudes_next_tool_call_exactly_once(outcome):
    *_, before, delivered, last = outcome.claude_requests
    assert ANSWER not in context(before)
    assert context(delivered).count(ANSWER) == 1
    assert context(last).count(ANSWER) == 1, "the answer was delivered twice"


def test_the_sessions_hooks_ran_without_a_problem(outcome):
    assert outcome.box.hook_log() == ""
    for run in (outcome.claude, outcome.codex):
        assert run.hook_problems() == []


def test_an_answered_question_is_not_reported_undelivered(outcome):
    *_, delivered, _ = outcome.claude_requests
    assert "not delivered" not in context(delivered)
