"""Scenario 6: the agents accept the hooks `colony-tasks install` wrote, at both scopes.

A session of each agent exercises every event we listen to. Each of our hooks must have run
and succeeded (Claude Code's debug log, Codex's hook status lines), nothing may be reported as
failed or as an invalid setting, and our own hook log (where a failing-open hook would leave
its only trace) stays empty. A control test breaks a few hooks on purpose to prove that the
check sees what the agents report.
"""

from __future__ import annotations

import json
import re

import pytest

from .model_server import MessagesServer, ResponsesServer, call, patch, say
from .sandbox import Sandbox

pytestmark = pytest.mark.agents

CLAUDE_EVENTS = {
    "session-start": "SessionStart:startup",
    "user-prompt-submit": "UserPromptSubmit",
    "pre-tool-use": "PreToolUse:Edit",
    "post-tool-use": "PostToolUse:Bash",
    "stop": "Stop",
    "session-end": "SessionEnd:other",
}
CODEX_EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]


def claude_script(box: Sandbox) -> MessagesServer:
    return MessagesServer(
        [
            call(
                "Edit",
                file_path=str(box.repo / "cart.py"),
                old_string="ITEMS = []",
                new_string="ITEMS = ['book']",
            ),
            call("Write", file_path=str(box.repo / "notes.md"), content="# Notes\n"),
            call("Bash", command="git status --short", description="Check the tree"),
            say("Done."),
        ]
    )


def codex_script() -> ResponsesServer:
    return ResponsesServer(
        [
            patch(
                "*** Begin Patch\n*** Update File: cart.py\n@@\n-ITEMS = ['book']\n"
                "+ITEMS = ['book', 'pen']\n*** Add File: todo.md\n+- ship\n*** End Patch\n"
            ),
            call("exec_command", cmd="git status --short"),
            say("Done."),
        ]
    )


def trust_project(box: Sandbox) -> None:
    """What answering Codex's trust prompt for the repository records."""
    config = box.home / ".codex" / "config.toml"
    text = config.read_text() if config.exists() else ""
    config.write_text(f'[projects."{box.repo}"]\ntrust_level = "trusted"\n\n' + text)


def run_both(box: Sandbox):
    with claude_script(box) as claude_model, codex_script() as codex_model:
        claude = box.claude(claude_model, "Put a book in the cart").finish()
        codex = box.codex(codex_model, "Add a pen").finish()
    return claude, codex


@pytest.mark.parametrize("scope", ["user", "project"])
def test_every_installed_hook_runs_and_succeeds(sandbox, scope):
    sandbox.write("cart.py", "ITEMS = []\n")
    sandbox.commit()
    sandbox.install("claude", scope)
    sandbox.install("codex", scope)
    if scope == "project":
        trust_project(sandbox)

    claude, codex = run_both(sandbox)

    assert claude.hook_problems() == []
    assert codex.hook_problems() == []
    # Project-scope files are committed, so they name the command on PATH, not this machine's.
    command = sandbox.colony_path if scope == "user" else "colony-tasks"
    for slug, label in CLAUDE_EVENTS.items():
        ran = f"{label} [{command} hook {slug} --agent claude]"
        assert ran in claude.debug, f"Claude did not run our {slug} hook"
    statuses = re.findall(
        r"colony-tasks hook [\w-]+ --agent claude\] \w+ with status (\d+)", claude.debug
    )
    assert len(statuses) >= len(CLAUDE_EVENTS) and set(statuses) == {"0"}, statuses
    for event in CODEX_EVENTS:
        assert f"hook: {event} Completed" in codex.output, f"Codex did not run our {event} hook"
    assert all(s["ended_at"] is not None for s in sandbox.colony_json("sessions")), (
        "a SessionEnd hook did not run"
    )
    assert sandbox.hook_log() == ""


def test_the_check_sees_hooks_the_agents_reject(sandbox):
    sandbox.write("cart.py", "ITEMS = []\n")
    sandbox.commit()
    sandbox.install("claude")
    sandbox.install("codex")
    settings_file = sandbox.home / ".claude" / "settings.json"
    settings = json.loads(settings_file.read_text())
    settings["hooks"]["PostTooluse"] = [{"hooks": [{"type": "command", "command": "true"}]}]
    settings["hooks"]["Stop"].append(
        {"hooks": [{"type": "command", "command": "sh", "args": ["-c", "exit 1"]}]}
    )
    settings_file.write_text(json.dumps(settings))
    hooks_file = sandbox.home / ".codex" / "hooks.json"
    hooks = json.loads(hooks_file.read_text())
    hooks["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "echo not json"}]})
    hooks_file.write_text(json.dumps(hooks))

    claude, codex = run_both(sandbox)

    claude_problems = "\n".join(claude.hook_problems())
    assert "PostTooluse" in claude_problems
    assert "Stop" in claude_problems and "status 1" in claude_problems
    assert any("Stop" in line for line in codex.hook_problems()), codex.output
