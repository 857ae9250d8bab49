"""Gemini CLI and Qwen Code beside Claude Code on one repository+branch, each a real CLI
against its scripted model server.

Claude edits a line with its real Edit tool and stays in its turn. The other client starts:
its briefing names Claude; it changes the line Claude changed (Gemini's ``replace``, Qwen's
``edit``), and since neither client shows the model what a hook says before a tool, the
warning reaches the model with the tool's result; then it asks Claude a question through our
MCP server and stays in its turn. Claude, released, edits the line again: it is warned before its edit about the
other client's change, and the question reaches it with its tool's result.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from .capabilities import record, transcript
from .gemini_server import GeminiServer
from .model_server import ChatCompletionsServer, MessagesServer, Step, call, context, say
from .scenarios import warning

pytestmark = pytest.mark.agents

QUESTION = "Which tax rate did finance approve?"


@dataclass(frozen=True)
class Client:
    agent: str
    server: type[GeminiServer] | type[ChatCompletionsServer]
    edit_tool: str
    ask_tool: str
    read_first: bool  # Qwen's edit tool refuses a file the session has not read


CLIENTS = {
    "gemini": Client("gemini", GeminiServer, "replace", "mcp_colony-tasks_ask_question", False),
    "qwen": Client("qwen", ChatCompletionsServer, "edit", "mcp__colony-tasks__ask_question", True),
}


@pytest.mark.parametrize("name", list(CLIENTS))
def test_a_client_and_claude_see_each_other_are_warned_and_reach_each_other(sandbox, name):
    client = CLIENTS[name]
    target = sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("claude")
    sandbox.install(client.agent)
    release_claude, release_client = threading.Event(), threading.Event()
    claude_model = MessagesServer(
        [
            call("Edit", file_path=str(target), old_string="TAX = 0.19", new_string="TAX = 0.2"),
            Step(
                tool="Edit",
                args={
                    "file_path": str(target),
                    "old_string": "TAX = 0.21",
                    "new_string": "TAX = 0.22",
                },
                gate=release_claude,
            ),
            say("Tax updated."),
        ]
    )
    read = [call("read_file", file_path=str(target))] if client.read_first else []
    client_model = client.server(
        [
            *read,
            call(
                client.edit_tool,
                file_path="prices.py" if name == "gemini" else str(target),
                old_string="TAX = 0.2",
                new_string="TAX = 0.21",
                **({"instruction": "set the tax rate"} if name == "gemini" else {}),
            ),
            Step(
                tool=client.ask_tool,
                args=lambda: {"question": QUESTION, "to": sandbox.session("claude")["handle"]},
            ),
            say("Asked.", gate=release_client),
        ]
    )
    with claude_model, client_model:
        claude = sandbox.claude(claude_model, "Set the tax rate to 0.2")
        claude_model.script[1].wait_reached("Claude's request after its Edit")
        claude_handle = sandbox.session("claude")["handle"]
        other = getattr(sandbox, client.agent)(client_model, "Set the tax rate to 0.21")
        client_model.script[-1].wait_reached(f"{name}'s request after ask_question")
        release_claude.set()  # the other session is still live: its change counts
        claude_model.script[2].wait_reached("Claude's request after its second Edit")
        release_client.set()
        other.finish()
        claude.finish()

    handle = sandbox.session(client.agent)["handle"]
    assert handle.startswith(f"{client.agent}-")
    first, *_, after_edit, after_ask = client_model.main_requests()
    assert claude_handle in context(first), f"{name}'s briefing does not name Claude"
    assert "git will conflict" not in context(first)
    said = warning("prices.py", "L1", claude_handle)
    assert context(after_edit).count(said) == 1  # held before the edit, said with its result
    assert target.read_text() == "TAX = 0.22\n"

    claude_after = claude_model.main_requests()[2]
    assert warning("prices.py", "L1", handle) in context(claude_after)
    assert QUESTION in context(claude_after), "the question did not reach Claude"
    (question,) = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "question"]
    assert (question["handle"], question["to"]) == (handle, claude_handle)

    version = sandbox.toolchain.version(client.agent)
    transcript(client.agent, version, "briefing", context(first), claude_handle)
    transcript(client.agent, version, "after its edit", context(after_edit), claude_handle)
    record(client.agent, version, "briefing", "yes: SessionStart context")
    record(client.agent, version, "warn_before", "no: said after the edit, with its result")
    record(client.agent, version, "warn_after", "yes: with the tool's result")
    record(client.agent, version, "mcp_tools", f"yes: {client.ask_tool}")
    record("claude", sandbox.toolchain.version("claude"), "mid_turn", "yes: with a tool's result")
    edits = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "edit"]
    assert [(o["handle"], o["text"]) for o in edits] == [
        (claude_handle, "prices.py (Edit)"),
        (handle, f"prices.py ({client.edit_tool})"),
        (claude_handle, "prices.py (Edit)"),
    ]
    assert sandbox.hook_log() == ""
    assert claude.hook_problems() == [] and other.hook_problems() == []
