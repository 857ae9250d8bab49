"""Checks of hook output against the agents' contracts.

Claude Code publishes no JSON Schema for hook output, so its contract is checked from
../shared/hooks-reference.md §2.3; Codex's published wire schemas are read from
../shared/schemas/codex/ (never copied into the project) and those checks are skipped, with
the reason, when ../shared is absent (a user's clone).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support import ROOT

SHARED = ROOT.parent / "shared"
SCHEMAS = SHARED / "schemas"
CODEX_SCHEMA_FILES = {
    "session-start": "session-start.command.output.schema.json",
    "user-prompt-submit": "user-prompt-submit.command.output.schema.json",
    "pre-tool-use": "pre-tool-use.command.output.schema.json",
    "post-tool-use": "post-tool-use.command.output.schema.json",
    "stop": "stop.command.output.schema.json",
}
EVENT_NAMES = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "pre-tool-use": "PreToolUse",
    "post-tool-use": "PostToolUse",
    "post-tool-use-failure": "PostToolUseFailure",
    "subagent-start": "SubagentStart",
}
CLAUDE_SPECIFIC = {
    "SessionStart": {"hookEventName", "additionalContext"},
    "UserPromptSubmit": {"hookEventName", "additionalContext"},
    "PreToolUse": {
        "hookEventName",
        "additionalContext",
        "permissionDecision",
        "permissionDecisionReason",
    },
    "PostToolUse": {"hookEventName", "additionalContext"},
    "PostToolUseFailure": {"hookEventName", "additionalContext"},
    "SubagentStart": {"hookEventName", "additionalContext"},
}


def schema(name: str) -> dict[str, Any]:
    path = SCHEMAS / name
    if not path.exists():
        pytest.skip(f"{path} not present: ../shared is beside the checkout only in CI and dev")
    return json.loads(path.read_text())


def parse(stdout: str) -> dict[str, Any] | None:
    if not stdout.strip():
        return None
    data = json.loads(stdout)
    assert isinstance(data, dict)
    return data


def check_claude(event: str, stdout: str) -> dict[str, Any] | None:
    """Stdout is empty or exactly one JSON object Claude Code accepts for this event."""
    data = parse(stdout)
    if data is None:
        return None
    assert set(data) == {"hookSpecificOutput"}
    specific = data["hookSpecificOutput"]
    assert specific["hookEventName"] == EVENT_NAMES[event]
    assert set(specific) <= CLAUDE_SPECIFIC[EVENT_NAMES[event]]
    context = specific.get("additionalContext", specific.get("permissionDecisionReason"))
    assert isinstance(context, str) and 0 < len(context) <= 10_000
    if "permissionDecision" in specific:
        assert specific["permissionDecision"] == "deny"
    return data


def check_codex(event: str, stdout: str) -> dict[str, Any] | None:
    """Stdout is empty or valid against Codex's published output schema for the event."""
    import jsonschema

    data = parse(stdout)
    if event == "session-end":
        assert data is None
        return None
    if event not in CODEX_SCHEMA_FILES:
        # No published schema here (SubagentStart): the same strict shape Codex's other wire
        # schemas have, the event name and additionalContext only.
        if data is not None:
            assert set(data) == {"hookSpecificOutput"}
            specific = data["hookSpecificOutput"]
            assert set(specific) == {"hookEventName", "additionalContext"}
            assert specific["hookEventName"] == EVENT_NAMES[event]
        return data
    jsonschema.Draft7Validator(schema(f"codex/{CODEX_SCHEMA_FILES[event]}")).validate(data or {})
    return data


def context_of(data: dict[str, Any] | None) -> str:
    if not data:
        return ""
    specific = data["hookSpecificOutput"]
    return specific.get("additionalContext") or specific.get("permissionDecisionReason") or ""
