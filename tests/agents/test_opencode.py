"""OpenCode beside Claude Code on one lane, both real CLIs, offline.

OpenCode runs ``opencode run`` against a scripted OpenAI chat-completions server with our
generated plugin installed (``~/.config/opencode/plugins/colony-tasks.js``); OpenCode has no
channel to the model before a tool runs, so the plugin appends the pre-tool warning to the
tool's result.
"""

from __future__ import annotations

import pytest

from . import scenarios
from .capabilities import record
from .model_server import context
from .scenarios import OPENCODE, QUESTION, chars_per_turn, warning

pytestmark = pytest.mark.agents


def version(sandbox) -> str:
    return sandbox.toolchain.versions["opencode-ai"]


def test_opencode_editing_the_line_claude_just_changed_is_warned(sandbox):
    pair = scenarios.other_edits_after_claude(sandbox, OPENCODE)

    claude_handle = pair.held
    opencode_handle = sandbox.session("opencode")["handle"]
    first, after_edit = pair.other_model.main_requests()[:2]
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
    record("opencode", version(sandbox), "warn_after", "yes: with the tool's result")
    chars = chars_per_turn(pair.other_model.main_requests())
    record("opencode", version(sandbox), "chars_per_turn", chars)


def test_claude_editing_the_line_opencode_just_changed_is_warned(sandbox):
    pair = scenarios.claude_edits_after_other(sandbox, OPENCODE)

    handle = pair.held
    first, after_edit = pair.claude_model.main_requests()[:2]
    assert f"{handle} (opencode" in context(first)
    assert warning("prices.py", "L1", handle) in context(after_edit)
    assert sandbox.hook_log() == ""


def test_a_question_from_claude_reaches_opencode_mid_turn(sandbox):
    pair = scenarios.question_from_claude(sandbox, OPENCODE)

    first, after_bash = pair.other_model.main_requests()[:2]
    assert QUESTION not in context(first)
    assert context(after_bash).count(QUESTION) == 1
    record("opencode", version(sandbox), "mid_turn", "yes")


def test_a_question_from_opencode_reaches_claude_mid_turn(sandbox):
    pair = scenarios.question_to_claude(sandbox, OPENCODE)

    (question,) = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "question"]
    assert question["session_id"] == sandbox.session("opencode")["id"]
    assert context(pair.claude_model.main_requests()[1]).count(QUESTION) == 1
    record("opencode", version(sandbox), "mcp_tools", "yes")
