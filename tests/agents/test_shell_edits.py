"""Scenario 5: an edit made through the shell (sed, a formatter, a script) of a file another
session changed warns in both agents, as an Edit or apply_patch does: the sed changes line 1,
the other session line 2, and git conflicts on adjacent changes.

PreToolUse notes the state of the files that matter before the shell command; PostToolUse
compares and treats the changed files as an Edit (colony_tasks/domain/shell_edits.py).
"""

from __future__ import annotations

import threading

import pytest

from .capabilities import record
from .model_server import MessagesServer, ResponsesServer, call, context, patch, say

pytestmark = [pytest.mark.agents]

SED = "sed -i 's/TAX = 0.19/TAX = 0.25/' prices.py"


def test_codex_editing_claudes_file_through_the_shell_is_warned(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\nSHIPPING = 5\n")
    sandbox.commit()
    sandbox.install("claude")
    sandbox.install("codex")
    release = threading.Event()
    claude_model = MessagesServer(
        [
            call(
                "Edit",
                file_path=str(sandbox.repo / "prices.py"),
                old_string="SHIPPING = 5",
                new_string="SHIPPING = 6",
            ),
            say("Done.", gate=release),
        ]
    )
    codex_model = ResponsesServer([call("exec_command", cmd=SED), say("Done.")])
    with claude_model, codex_model:
        claude = sandbox.claude(claude_model, "Raise shipping")
        claude_model.script[1].wait_reached("Claude's request after its Edit")
        sandbox.codex(codex_model, "Raise the tax").finish()
        release.set()
        claude.finish()

    assert "TAX = 0.25" in (sandbox.repo / "prices.py").read_text()
    claude_handle = sandbox.session("claude")["handle"]
    after_shell = codex_model.main_requests()[1]
    assert f"meets {claude_handle}'s change (main): git will conflict" in context(after_shell)
    assert "colony-tasks: prices.py L1" in context(after_shell)
    after = "yes: with the tool's result (shell edits too)"
    record("codex", sandbox.toolchain.version("codex"), "warn_after", after)


def test_claude_editing_codexs_file_through_the_shell_is_warned(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\nSHIPPING = 5\n")
    sandbox.commit()
    sandbox.install("claude")
    sandbox.install("codex")
    release = threading.Event()
    codex_model = ResponsesServer(
        [
            patch(
                "*** Begin Patch\n*** Update File: prices.py\n@@\n-SHIPPING = 5\n+SHIPPING = 6\n"
                "*** End Patch\n"
            ),
            say("Done.", gate=release),
        ]
    )
    claude_model = MessagesServer(
        [call("Bash", command=SED, description="Raise tax"), say("Done.")]
    )
    with claude_model, codex_model:
        codex = sandbox.codex(codex_model, "Raise shipping")
        codex_model.script[1].wait_reached("Codex's request after its patch")
        sandbox.claude(claude_model, "Raise the tax").finish()
        release.set()
        codex.finish()

    assert "TAX = 0.25" in (sandbox.repo / "prices.py").read_text()
    codex_handle = sandbox.session("codex")["handle"]
    after_shell = claude_model.main_requests()[1]
    assert f"meets {codex_handle}'s change (main): git will conflict" in context(after_shell)
    assert "colony-tasks: prices.py L1" in context(after_shell)
