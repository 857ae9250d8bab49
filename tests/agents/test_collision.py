"""Scenario 2: a Claude session and a Codex session on one repository+branch.

Claude edits a file with its real Edit tool and stays in its turn (its model server holds the
final answer); Codex then patches the same line with its real apply_patch, so git will conflict
when the work is merged. Codex's briefing names Claude, the collision warning (said once, before
the patch) reaches Codex's next model request, and the store records both edits with the
repository-relative path.
"""

from __future__ import annotations

import threading

import pytest

from .capabilities import record
from .model_server import MessagesServer, ResponsesServer, call, context, patch, say

pytestmark = pytest.mark.agents


def test_codex_patching_a_file_claude_just_edited_is_warned(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("claude")
    sandbox.install("codex")
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
    codex_model = ResponsesServer(
        [
            patch(
                "*** Begin Patch\n*** Update File: prices.py\n@@\n-TAX = 0.2\n+TAX = 0.21\n"
                "*** End Patch\n"
            ),
            say("Patched."),
        ]
    )
    with claude_model, codex_model:
        claude = sandbox.claude(claude_model, "Set the tax rate to 0.2")
        claude_model.script[1].wait_reached("Claude's request after its Edit")
        claude_handle = sandbox.session("claude")["handle"]

        codex = sandbox.codex(codex_model, "Set the tax rate to 0.21").finish()
        release_claude.set()
        claude.finish()

    codex_handle = sandbox.session("codex")["handle"]
    first, after_patch = codex_model.main_requests()[:2]
    assert claude_handle in context(first), "Codex's briefing does not name the Claude session"
    assert "git will conflict" not in context(first)
    warning = context(after_patch)
    said = (
        f"colony-tasks: prices.py L1 meets {claude_handle}'s change (main): git will conflict;"
        f' ask_question(to="{claude_handle}") first.'
    )
    assert warning.count(said) == 1  # PreToolUse, before apply_patch ran; not again after it
    version = sandbox.toolchain.version("codex")
    record("codex", version, "briefing", "yes: SessionStart context")
    record("codex", version, "warn_before", "yes: PreToolUse context")
    assert f"you are {claude_handle}" in context(claude_model.main_requests()[0])
    record("claude", sandbox.toolchain.version("claude"), "briefing", "yes: SessionStart context")
    assert (sandbox.repo / "prices.py").read_text() == "TAX = 0.21\n"

    edits = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "edit"]
    assert [(o["handle"], o["text"]) for o in edits] == [
        (claude_handle, "prices.py (Edit)"),
        (codex_handle, "prices.py (apply_patch)"),
    ]
    assert sandbox.hook_log() == ""
    for run in (claude, codex):
        assert run.hook_problems() == []
