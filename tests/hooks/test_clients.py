"""Gemini CLI and Qwen Code payloads (captured verbatim from the real CLIs, see payloads/) read
into the core's terms, and the core's replies rendered in the JSON each of them accepts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from colony_tasks.base.agent_events import EDIT, READ, SHELL
from colony_tasks.hooks import replies
from colony_tasks.hooks.payload import request, tool_use
from colony_tasks.hooks.runner import handle
from tests.support.hookrun import claude

PAYLOADS = Path(__file__).with_name("payloads")
CAPTURED_CWD = "/home/dev/proj"


def captured(agent: str, name: str, cwd: Path | None = None) -> dict[str, Any]:
    """A captured payload; ``cwd``: moved into that folder (its paths too)."""
    text = (PAYLOADS / agent / f"{name}.json").read_text()
    if cwd is not None:
        text = text.replace(CAPTURED_CWD, str(cwd))
    return json.loads(text)


@pytest.mark.parametrize(
    ("agent", "name", "action", "paths", "edits"),
    [
        ("gemini", "BeforeTool-replace", EDIT, ["hello.txt"], [["replace", "hello.txt", "hello", "hi"]]),
        ("gemini", "BeforeTool-write_file", EDIT, ["hello.txt"], [["write", "hello.txt", "", "hello\n"]]),
        ("gemini", "BeforeTool-read_file", READ, ["hello.txt"], []),
        ("gemini", "BeforeTool-run_shell_command", SHELL, [], []),
        ("qwen", "PreToolUse-edit", EDIT, [f"{CAPTURED_CWD}/hello.txt"], [["replace", f"{CAPTURED_CWD}/hello.txt", "hello", "hi"]]),
        ("qwen", "PreToolUse-write_file", EDIT, [f"{CAPTURED_CWD}/hello.txt"], [["write", f"{CAPTURED_CWD}/hello.txt", "", "hello\n"]]),
        ("qwen", "PreToolUse-read_file", READ, [f"{CAPTURED_CWD}/hello.txt"], []),
        ("qwen", "PreToolUse-run_shell_command", SHELL, [], []),
    ],
)  # fmt: skip
def test_tool_calls_read_by_each_clients_tool_names(agent, name, action, paths, edits):
    call = tool_use(captured(agent, name), edits=True, agent=agent)
    assert (call.action, list(call.paths), [list(e) for e in call.edits]) == (action, paths, edits)


def test_a_clients_tool_names_are_its_own():
    payload = captured("gemini", "BeforeTool-replace")
    assert tool_use(payload, agent="claude").action == "other"
    assert tool_use({**payload, "tool_name": "edit"}, agent="gemini").action == "other"
    assert tool_use({**payload, "tool_name": "edit"}, agent="qwen").action == EDIT


def test_shell_command_of_run_shell_command():
    call = tool_use(captured("gemini", "BeforeTool-run_shell_command"), agent="gemini")
    assert call.command == "ls -la"


def test_qwen_records_only_the_users_own_prompt():
    """Qwen Code fires UserPromptSubmit before every model call; only the user's submission
    carries ``submitted_prompt``."""
    first = captured("qwen", "UserPromptSubmit")
    again = {k: v for k, v in first.items() if k != "submitted_prompt"} | {"prompt": ""}
    again_with_text = {**again, "prompt": "tool results follow"}
    fields = [
        request("user-prompt-submit", "qwen", p, json.dumps(p).encode()).fields["prompt"]
        for p in (first, again, again_with_text)
    ]
    assert fields == ["create hello.txt", "", ""]
    gemini = captured("gemini", "BeforeAgent")
    raw = json.dumps(gemini).encode()
    assert request("user-prompt-submit", "gemini", gemini, raw).fields["prompt"] == gemini["prompt"]


def test_gemini_says_a_deny_as_a_decision_and_context_by_its_own_event_names():
    deny = replies.render("pre-tool-use", {"deny": "held by claude-1a2b"}, "gemini")
    assert deny == {"decision": "deny", "reason": "held by claude-1a2b"}
    said = replies.render("user-prompt-submit", {"context": "news"}, "gemini")
    assert said == {
        "hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "news"}
    }
    after = replies.render("post-tool-use", {"context": "x"}, "gemini")
    assert after and after["hookSpecificOutput"]["hookEventName"] == "AfterTool"
    assert replies.render("stop", {"block": "answer q"}, "gemini") == {
        "decision": "deny",
        "reason": "answer q",
    }
    assert replies.render("session-end", {"context": "x"}, "gemini") is None


def test_qwen_and_claude_share_the_claude_form():
    for agent in ("qwen", "claude"):
        deny = replies.render("pre-tool-use", {"deny": "no"}, agent)
        assert deny == {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no",
            }
        }


@pytest.mark.parametrize("agent", ["gemini", "qwen"])
def test_what_a_client_drops_before_a_tool_is_said_after_it(home: Path, agent: str):
    assert replies.render("pre-tool-use", {"context": "warned"}, agent, "s-1") is None
    assert replies.render("pre-tool-use", {"context": "noted"}, agent, "s-1") is None
    assert replies.render("pre-tool-use", {"context": "elsewhere"}, agent, "s-2") is None
    after = replies.render("post-tool-use", {"context": "delivered"}, agent, "s-1")
    assert after is not None
    assert after["hookSpecificOutput"]["additionalContext"] == "warned\nnoted\n\ndelivered"
    assert replies.render("post-tool-use", None, agent, "s-1") is None  # said once
    alone = replies.render("post-tool-use", None, agent, "s-2")
    assert alone and alone["hookSpecificOutput"]["additionalContext"] == "elsewhere"


def test_claude_keeps_its_warning_before_the_tool(home: Path):
    said = replies.render("pre-tool-use", {"context": "warned"}, "claude", "s-1")
    assert said == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "warned"}
    }
    assert replies.render("post-tool-use", None, "claude", "s-1") is None


def _context(output: dict[str, Any] | None) -> str:
    return (output or {}).get("hookSpecificOutput", {}).get("additionalContext", "")


@pytest.mark.parametrize(
    ("agent", "start", "before", "after"),
    [
        ("gemini", "SessionStart", "BeforeTool-replace", "AfterTool-replace"),
        ("qwen", "SessionStart", "PreToolUse-edit", "PostToolUse-edit"),
    ],
)
def test_a_client_editing_lines_a_claude_session_changed_is_warned_after_its_edit(
    home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch, agent, start, before, after
):
    """The captured payloads, moved into a real repository: Claude changed line 1 of
    hello.txt; the client's replace of that line is warned about with its tool's result."""
    monkeypatch.setenv("COLONY_TASKS_RELAY", "off")
    target = repo / "hello.txt"
    target.write_text("hello\n")

    def run(event: str, payload: dict[str, Any], who: str) -> dict[str, Any] | None:
        return handle(event, who, json.dumps(payload).encode())

    run("session-start", claude("session-start", "cl-1", repo, source="startup"), "claude")
    edit = {"file_path": str(target), "old_string": "hello", "new_string": "hey"}
    run(
        "pre-tool-use",
        claude("pre-tool-use", "cl-1", repo, tool_name="Edit", tool_input=edit),
        "claude",
    )
    target.write_text("hey\n")
    run("post-tool-use", claude("post-tool-use", "cl-1", repo, tool_name="Edit", tool_input=edit), "claude")  # fmt: skip

    brief = _context(run("session-start", captured(agent, start, repo), agent))
    assert "claude-" in brief
    theirs = captured(agent, before, repo)
    theirs["tool_input"]["old_string"] = "hey"
    assert run("pre-tool-use", theirs, agent) is None  # the client would drop it: held back
    target.write_text("hi\n")
    mine = captured(agent, after, repo)
    mine["tool_input"]["old_string"] = "hey"
    warning = _context(run("post-tool-use", mine, agent))
    assert "hello.txt L1 meets claude-" in warning and "git will conflict" in warning
