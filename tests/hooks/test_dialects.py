"""Copilot CLI's and OpenCode's payloads, read as Claude's, and the replies each reads."""

from __future__ import annotations

import json

from colony_tasks.hooks import dialects
from colony_tasks.hooks.payload import request, tool_use
from colony_tasks.hooks.runner import render, unnamed

# Verbatim shapes from Copilot CLI 1.0.102 (native preToolUse; .claude/settings.json PreToolUse).
COPILOT_EDIT = {
    "sessionId": "548449aa",
    "timestamp": 1795834267583,
    "cwd": "/p",
    "toolName": "edit",
    "toolArgs": {"path": "/p/hello.txt", "old_str": "hello", "new_str": "hi"},
}
COPILOT_CLAUDE_WRITE = {
    "hook_event_name": "PreToolUse",
    "session_id": "548449aa",
    "cwd": "/p",
    "tool_name": "Write",
    "tool_input": {"path": "/p/hello.txt", "file_text": "hello\n"},
}
# What our OpenCode plugin sends for tool.execute.before (edit).
OPENCODE_EDIT = {
    "session_id": "ses_1",
    "cwd": "/p",
    "hook_event_name": "tool.execute.before",
    "tool_name": "edit",
    "tool_input": {"filePath": "/p/hello.txt", "oldString": "hello", "newString": "hi"},
    "tool_use_id": "call_5",
}


def test_a_native_copilot_edit_is_an_edit_with_its_strings():
    agent, payload = dialects.adapt("copilot", COPILOT_EDIT, {})
    call = tool_use(payload, edits=True)
    assert (agent, payload["session_id"], call.name, call.action) == (
        "copilot",
        "548449aa",
        "edit",
        "edit",
    )
    assert call.paths == ["/p/hello.txt"]
    assert call.edits == [["replace", "/p/hello.txt", "hello", "hi"]]


def test_copilot_bash_and_view_are_shell_and_read():
    bash = dialects.from_copilot(
        {"sessionId": "s", "toolName": "bash", "toolArgs": {"command": "ls"}}
    )
    view = dialects.from_copilot(
        {"sessionId": "s", "toolName": "view", "toolArgs": '{"path": "/a"}'}
    )
    assert (tool_use(bash).action, tool_use(bash).command) == ("shell", "ls")
    assert (tool_use(view).action, tool_use(view).paths) == ("read", ["/a"])


def test_a_copilot_subagents_hook_is_its_parents_naming_the_subagent():
    # Copilot CLI 1.0.102: inside a subagent, its own sessionId (= agentId) and the parent's
    # as parentAgentId; the subagent's lifecycle hooks carry the parent's sessionId.
    ids = {"agentId": "e43d0220-ea82", "agentType": "task", "parentAgentId": "83a50936"}
    inside = dialects.from_copilot({**COPILOT_EDIT, "sessionId": "e43d0220-ea82", **ids})
    started = dialects.from_copilot({"sessionId": "83a50936", "agentName": "task", **ids})
    assert [request("pre-tool-use", "copilot", inside, b"").subagent] == ["task e43d0220"]
    assert (inside["session_id"], started["session_id"]) == ("83a50936", "83a50936")
    assert started["agent_type"] == "task"
    assert dialects.from_copilot(COPILOT_EDIT)["session_id"] == "548449aa"


def test_an_opencode_edit_is_an_edit_paired_by_its_call_id():
    _, payload = dialects.adapt("opencode", OPENCODE_EDIT, {})
    call = tool_use(payload, edits=True)
    assert (call.name, call.action, call.use_id) == ("edit", "edit", "call_5")
    assert call.edits == [["replace", "/p/hello.txt", "hello", "hi"]]


def test_claudes_hook_inside_copilot_is_copilots_unless_a_native_hook_of_ours_is_there(tmp_path):
    env = {"COPILOT_CLI": "1", "COPILOT_HOME": str(tmp_path / "copilot")}
    agent, payload = dialects.adapt("claude", COPILOT_CLAUDE_WRITE, env)
    assert agent == "copilot"
    assert tool_use(payload, edits=True).edits == [["write", "/p/hello.txt", "", "hello\n"]]
    native = tmp_path / "copilot" / "hooks" / "colony-tasks.json"
    native.parent.mkdir(parents=True)
    native.write_text("{}")
    assert dialects.adapt("claude", COPILOT_CLAUDE_WRITE, env) is None
    assert dialects.adapt("claude", COPILOT_CLAUDE_WRITE, {}) == ("claude", COPILOT_CLAUDE_WRITE)


def test_copilot_and_opencode_read_flat_replies():
    for agent in ("copilot", "opencode"):
        assert render("pre-tool-use", {"deny": "held"}, agent) == {
            "permissionDecision": "deny",
            "permissionDecisionReason": "held",
        }
        assert render("session-start", {"context": "brief"}, agent) == {
            "additionalContext": "brief"
        }
        assert render("subagent-start", {"context": "sub"}, agent) == {"additionalContext": "sub"}
    assert render("session-start", {"context": "brief"}, "claude") == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "brief"}
    }


def test_a_bare_run_reads_its_event_from_the_claude_payload():
    assert unnamed(json.dumps(COPILOT_CLAUDE_WRITE).encode()) == ("pre-tool-use", "claude")
