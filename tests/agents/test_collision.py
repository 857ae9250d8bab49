"""Scenario 2: a Claude session and a Codex session on one repository+branch.

Claude edits a file with its real Edit tool and stays in its turn (its model server holds the
final answer); Codex then patches the same line with its real apply_patch, so git will conflict
when the work is merged. Codex's briefing names Claude, the collision warning (said once, before
the patch) reaches Codex's next model request, and the store records both edits with the
repository-relative path.
"""

from __future__ import annotations

import pytest

from . import scenarios
from .capabilities import record
from .model_server import context
from .scenarios import CODEX, chars_per_turn, warning

pytestmark = pytest.mark.agents


def test_codex_patching_a_file_claude_just_edited_is_warned(sandbox):
    pair = scenarios.other_edits_after_claude(sandbox, CODEX)
    claude, codex, claude_handle = pair.claude, pair.other, pair.held
    codex_handle = sandbox.session("codex")["handle"]
    first, after_patch = pair.other_model.main_requests()[:2]
    assert claude_handle in context(first), "Codex's briefing does not name the Claude session"
    assert "git will conflict" not in context(first)
    said = warning("prices.py", "L1", claude_handle)
    assert (
        context(after_patch).count(said) == 1
    )  # PreToolUse, before apply_patch ran; not again after it
    version = sandbox.toolchain.version("codex")
    record("codex", version, "briefing", "yes: SessionStart context")
    record("codex", version, "warn_before", "yes: PreToolUse context")
    record("codex", version, "chars_per_turn", chars_per_turn(pair.other_model.main_requests()))
    assert f"you are {claude_handle}" in context(pair.claude_model.main_requests()[0])
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
