"""GitHub Copilot CLI beside Claude Code on one lane, both real CLIs, offline.

Copilot runs ``copilot -p`` against a scripted OpenAI chat-completions server (BYOK with
``COPILOT_OFFLINE=true``), with colony-tasks installed natively (``~/.copilot/hooks``); Claude
Code against a scripted Messages server. Each sees the other in its briefing and is warned,
before its edit, about the other's change to the same line; a shell command of Copilot's
that changes Claude's file is warned about with its result.
"""

from __future__ import annotations

import threading

import pytest

from . import scenarios
from .capabilities import record, transcript
from .model_server import ChatCompletionsServer, MessagesServer, call, context, say
from .scenarios import COPILOT, QUESTION, chars_per_turn, warning

pytestmark = pytest.mark.agents


def version(sandbox) -> str:
    return sandbox.toolchain.versions["@github/copilot"]


def test_copilot_editing_the_line_claude_just_changed_is_warned(sandbox):
    pair = scenarios.other_edits_after_claude(sandbox, COPILOT)

    claude_handle = pair.held
    copilot_handle = sandbox.session("copilot")["handle"]
    first, after_edit = pair.other_model.main_requests()[:2]
    assert claude_handle in context(first), "Copilot's briefing does not name the Claude session"
    assert warning("prices.py", "L1", claude_handle) in context(after_edit)
    assert (sandbox.repo / "prices.py").read_text() == "TAX = 0.21\n"
    edits = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "edit"]
    assert [(o["handle"], o["text"]) for o in edits] == [
        (claude_handle, "prices.py (Edit)"),
        (copilot_handle, "prices.py (edit)"),
    ]
    assert sandbox.hook_log() == ""
    assert pair.claude.hook_problems() == []
    transcript("copilot", version(sandbox), "briefing", context(first), claude_handle)
    transcript("copilot", version(sandbox), "after its edit", context(after_edit), claude_handle)
    record("copilot", version(sandbox), "briefing", "yes")
    record("copilot", version(sandbox), "warn_before", "yes")
    chars = chars_per_turn(pair.other_model.main_requests())
    record("copilot", version(sandbox), "chars_per_turn", chars)


def test_claude_editing_the_line_copilot_just_changed_is_warned(sandbox):
    pair = scenarios.claude_edits_after_other(sandbox, COPILOT)

    copilot_handle = pair.held
    first, after_edit = pair.claude_model.main_requests()[:2]
    assert copilot_handle in context(first), "Claude's briefing does not name the Copilot session"
    assert f"{copilot_handle} (copilot" in context(first)
    assert warning("prices.py", "L1", copilot_handle) in context(after_edit)
    assert sandbox.hook_log() == ""
    version_of = sandbox.toolchain.version
    record("claude", version_of("claude"), "warn_before", "yes: PreToolUse context")
    chars = chars_per_turn(pair.claude_model.main_requests())
    record("claude", version_of("claude"), "chars_per_turn", chars)


def test_a_question_from_claude_reaches_copilot_mid_turn(sandbox):
    pair = scenarios.question_from_claude(sandbox, COPILOT)

    first, after_bash = pair.other_model.main_requests()[:2]
    assert QUESTION not in context(first)
    assert context(after_bash).count(QUESTION) == 1
    record("copilot", version(sandbox), "mid_turn", "yes")


def test_a_question_from_copilot_reaches_claude_mid_turn(sandbox):
    pair = scenarios.question_to_claude(sandbox, COPILOT)

    (question,) = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "question"]
    assert question["session_id"] == sandbox.session("copilot")["id"]  # its MCP server knew it
    assert context(pair.claude_model.main_requests()[1]).count(QUESTION) == 1
    record("copilot", version(sandbox), "mcp_tools", "yes")


@pytest.mark.parametrize("broken", ["missing", "crashing"])
def test_copilot_runs_its_tools_when_colony_tasks_is_broken(sandbox, broken):
    """Copilot denies a tool whose preToolUse hook fails: ours must fail open."""
    sandbox.install("copilot")
    hooks = sandbox.home / ".copilot" / "hooks" / "colony-tasks.json"
    executable = sandbox.home / "broken" / "colony-tasks"
    if broken == "crashing":
        executable.parent.mkdir()
        executable.write_text("#!/bin/sh\necho 'Traceback: ImportError' >&2\nexit 1\n")
        executable.chmod(0o755)
    hooks.write_text(hooks.read_text().replace(sandbox.colony_path, str(executable)))
    model = ChatCompletionsServer(
        [call("create", path=str(sandbox.repo / "notes.txt"), file_text="hello\n"), say("Done.")]
    )
    with model:
        run = sandbox.copilot(model, "Write notes").finish()

    assert (sandbox.repo / "notes.txt").read_text() == "hello\n", run.output[-2000:]
    assert "Denied" not in context(model.main_requests()[1])


@pytest.mark.parametrize("native", [True, False])
def test_copilot_running_claudes_project_hooks_is_one_session(sandbox, native):
    """Copilot also runs .claude/settings.json hooks (Claude's dialect, Copilot's session id):
    beside our native hooks they are skipped; alone, they count as the Copilot session."""
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("claude", scope="project")
    if native:
        sandbox.install("copilot")
    model = ChatCompletionsServer(
        [
            call("edit", path=str(sandbox.repo / "prices.py"), old_str="0.19", new_str="0.2"),
            say("Done."),
        ]
    )
    with model:
        sandbox.copilot(model, "Raise the tax").finish()

    listed = sandbox.colony_json("sessions")
    assert [s["agent"] for s in listed] == ["copilot"]
    assert (sandbox.repo / "prices.py").read_text() == "TAX = 0.2\n"
    assert context(model.main_requests()[0]).count("colony-tasks: you are copilot-") == 1
    assert sandbox.hook_log() == ""


def test_copilot_editing_claudes_file_through_the_shell_is_warned_after(sandbox):
    """A sed run by Copilot's bash tool changes line 1 beside Claude's change to line 2: git
    conflicts on adjacent changes; the warning comes with the command's result."""
    sandbox.write("prices.py", "TAX = 0.19\nSHIPPING = 5\n")
    sandbox.commit()
    sandbox.install("claude")
    sandbox.install("copilot")
    release = threading.Event()
    target = str(sandbox.repo / "prices.py")
    claude_model = MessagesServer(
        [
            call("Edit", file_path=target, old_string="SHIPPING = 5", new_string="SHIPPING = 6"),
            say("Done.", gate=release),
        ]
    )
    sed = "sed -i 's/TAX = 0.19/TAX = 0.25/' prices.py"
    copilot_model = ChatCompletionsServer(
        [call("bash", command=sed, description="Raise the tax"), say("Done.")]
    )
    with claude_model, copilot_model:
        claude = sandbox.claude(claude_model, "Raise shipping")
        claude_model.script[1].wait_reached("Claude's request after its Edit")
        claude_handle = sandbox.session("claude")["handle"]
        sandbox.copilot(copilot_model, "Raise the tax").finish()
        release.set()
        claude.finish()

    assert (sandbox.repo / "prices.py").read_text() == "TAX = 0.25\nSHIPPING = 6\n"
    before_shell, after_shell = copilot_model.main_requests()[:2]
    assert "git will conflict" not in context(before_shell)
    assert context(after_shell).count(f"meets {claude_handle}'s change (main): git will") == 1
    assert "colony-tasks: prices.py L1" in context(after_shell)
    assert sandbox.hook_log() == ""
    record("copilot", version(sandbox), "warn_after", "yes: with the tool's result (shell edits)")
