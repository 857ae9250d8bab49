"""GitHub Copilot CLI beside Claude Code on one lane, both real CLIs, offline.

Copilot runs ``copilot -p`` against a scripted OpenAI chat-completions server (BYOK with
``COPILOT_OFFLINE=true``), with colony-tasks installed natively (``~/.copilot/hooks``); Claude
Code against a scripted Messages server. Each sees the other in its briefing and is warned,
before its edit, about the other's change to the same line.
"""

from __future__ import annotations

import threading

import pytest

from .model_server import ChatCompletionsServer, MessagesServer, call, context, say

pytestmark = pytest.mark.agents


def warning(file: str, line: str, handle: str) -> str:
    return (
        f"colony-tasks: {file} {line} meets {handle}'s change (main): git will conflict;"
        f' ask_question(to="{handle}") first.'
    )


def test_copilot_editing_the_line_claude_just_changed_is_warned(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("claude")
    sandbox.install("copilot")
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
    copilot_model = ChatCompletionsServer(
        [
            call(
                "edit",
                path=str(sandbox.repo / "prices.py"),
                old_str="TAX = 0.2",
                new_str="TAX = 0.21",
            ),
            say("Edited."),
        ]
    )
    with claude_model, copilot_model:
        claude = sandbox.claude(claude_model, "Set the tax rate to 0.2")
        claude_model.script[1].wait_reached("Claude's request after its Edit")
        claude_handle = sandbox.session("claude")["handle"]
        copilot = sandbox.copilot(copilot_model, "Set the tax rate to 0.21").finish()
        release_claude.set()
        claude.finish()

    copilot_handle = sandbox.session("copilot")["handle"]
    first, after_edit = copilot_model.main_requests()[:2]
    assert claude_handle in context(first), "Copilot's briefing does not name the Claude session"
    assert warning("prices.py", "L1", claude_handle) in context(after_edit)
    assert (sandbox.repo / "prices.py").read_text() == "TAX = 0.21\n"
    edits = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "edit"]
    assert [(o["handle"], o["text"]) for o in edits] == [
        (claude_handle, "prices.py (Edit)"),
        (copilot_handle, "prices.py (edit)"),
    ]
    assert sandbox.hook_log() == ""
    assert claude.hook_problems() == []
