"""OpenCode beside Claude Code on one lane, both real CLIs, offline.

OpenCode runs ``opencode run`` against a scripted OpenAI chat-completions server with our
generated plugin installed (``~/.config/opencode/plugins/colony-tasks.js``); OpenCode has no
channel to the model before a tool runs, so the plugin appends the pre-tool warning to the
tool's result.
"""

from __future__ import annotations

import threading

import pytest

from .capabilities import record
from .model_server import ChatCompletionsServer, MessagesServer, Step, call, context, say

pytestmark = pytest.mark.agents

QUESTION = "Which port does the billing API listen on?"


def version(sandbox) -> str:
    return sandbox.toolchain.versions["opencode-ai"]


def warning(file: str, line: str, handle: str) -> str:
    return (
        f"colony-tasks: {file} {line} meets {handle}'s change (main): git will conflict;"
        f' ask_question(to="{handle}") first.'
    )


def test_opencode_editing_the_line_claude_just_changed_is_warned(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("claude")
    sandbox.install("opencode")
    release_claude = threading.Event()
    claude_model = MessagesServer(
        [
            call(
                "Edit",
                file_path=str(sandbox.repo / "prices.py"),
                old_string="TAX = 0.19",
                new_string="TAX = 0.2",
            ),
            say("Tax updated.", gate=release_claude),
        ]
    )
    opencode_model = ChatCompletionsServer(
        [
            call(
                "edit",
                filePath=str(sandbox.repo / "prices.py"),
                oldString="TAX = 0.2",
                newString="TAX = 0.21",
            ),
            say("Edited."),
        ]
    )
    with claude_model, opencode_model:
        claude = sandbox.claude(claude_model, "Set the tax rate to 0.2")
        claude_model.script[1].wait_reached("Claude's request after its Edit")
        claude_handle = sandbox.session("claude")["handle"]
        sandbox.opencode(opencode_model, "Set the tax rate to 0.21").finish()
        release_claude.set()
        claude.finish()

    opencode_handle = sandbox.session("opencode")["handle"]
    first, after_edit = opencode_model.main_requests()[:2]
    assert claude_handle in context(first), "OpenCode's briefing does not name the Claude session"
    assert context(after_edit).count(warning("prices.py", "L1", claude_handle)) == 1
    assert (sandbox.repo / "prices.py").read_text() == "TAX = 0.21\n"
    edits = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "edit"]
    assert [(o["handle"], o["text"]) for o in edits] == [
        (claude_handle, "prices.py (Edit)"),
        (opencode_handle, "prices.py (edit)"),
    ]
    assert sandbox.hook_log() == ""
    record("opencode", version(sandbox), "briefing", "yes")
    record("opencode", version(sandbox), "warn_before", "after the tool (no channel before)")


def test_claude_editing_the_line_opencode_just_changed_is_warned(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("claude")
    sandbox.install("opencode")
    release = threading.Event()
    opencode_model = ChatCompletionsServer(
        [
            call(
                "edit",
                filePath=str(sandbox.repo / "prices.py"),
                oldString="TAX = 0.19",
                newString="TAX = 0.2",
            ),
            say("Edited.", gate=release),
        ]
    )
    claude_model = MessagesServer(
        [
            call(
                "Edit",
                file_path=str(sandbox.repo / "prices.py"),
                old_string="TAX = 0.2",
                new_string="TAX = 0.21",
            ),
            say("Tax updated."),
        ]
    )
    with claude_model, opencode_model:
        opencode = sandbox.opencode(opencode_model, "Set the tax rate to 0.2")
        opencode_model.script[1].wait_reached("OpenCode's request after its edit")
        handle = sandbox.session("opencode")["handle"]
        sandbox.claude(claude_model, "Set the tax rate to 0.21").finish()
        release.set()
        opencode.finish()

    first, after_edit = claude_model.main_requests()[:2]
    assert f"{handle} (opencode" in context(first)
    assert warning("prices.py", "L1", handle) in context(after_edit)
    assert sandbox.hook_log() == ""


def test_a_question_from_claude_reaches_opencode_mid_turn(sandbox):
    sandbox.write("api.py", "PORT = None\n")
    sandbox.commit()
    sandbox.install("claude")
    sandbox.install("opencode")
    go = threading.Event()
    opencode_model = ChatCompletionsServer(
        [
            Step(tool="bash", args={"command": "true", "description": "Wait"}, gate=go),
            say("Done."),
        ]
    )
    claude_model = MessagesServer(
        [
            Step(
                tool="mcp__colony-tasks__ask_question",
                args=lambda: {"question": QUESTION, "to": sandbox.session("opencode")["handle"]},
            ),
            say("Asked."),
        ]
    )
    with claude_model, opencode_model:
        opencode = sandbox.opencode(opencode_model, "Help the others on this branch")
        opencode_model.script[0].wait_reached("OpenCode's first request")
        sandbox.claude(claude_model, "Ask about the billing port").finish()
        go.set()
        opencode.finish()

    first, after_bash = opencode_model.main_requests()[:2]
    assert QUESTION not in context(first)
    assert context(after_bash).count(QUESTION) == 1
    record("opencode", version(sandbox), "mid_turn", "yes")


def test_a_question_from_opencode_reaches_claude_mid_turn(sandbox):
    sandbox.write("api.py", "PORT = None\n")
    sandbox.commit()
    sandbox.install("claude")
    sandbox.install("opencode")
    go = threading.Event()
    claude_model = MessagesServer(
        [
            Step(tool="Bash", args={"command": "true", "description": "Wait"}, gate=go),
            say("Done."),
        ]
    )
    opencode_model = ChatCompletionsServer(
        [
            Step(
                tool="colony-tasks_ask_question",
                args=lambda: {"question": QUESTION, "to": sandbox.session("claude")["handle"]},
            ),
            say("Asked."),
        ]
    )
    with claude_model, opencode_model:
        claude = sandbox.claude(claude_model, "Help the others on this branch")
        claude_model.script[0].wait_reached("Claude's first request")
        sandbox.opencode(opencode_model, "Ask about the billing port").finish()
        go.set()
        claude.finish()

    (question,) = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "question"]
    assert question["session_id"] == sandbox.session("opencode")["id"]
    assert context(claude_model.main_requests()[1]).count(QUESTION) == 1
    record("opencode", version(sandbox), "mcp_tools", "yes")
