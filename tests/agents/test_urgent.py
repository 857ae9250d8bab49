"""Scenario 4: an urgent post by a human reaches a running Claude session mid-turn.

Claude runs a command, then its model server holds the next step while a human posts with
`colony-tasks post ... --urgent`. The post is in the context Claude's next tool call returns
(the PostToolUse hook of that call), not in the request before it.
"""

from __future__ import annotations

import threading

import pytest

from .model_server import MessagesServer, call, context, say

pytestmark = pytest.mark.agents

URGENT = "Stop editing checkout.py: the release branch is frozen."


def test_an_urgent_human_post_arrives_with_the_next_tool_result(sandbox):
    sandbox.write("checkout.py", "TOTAL = 0\n")
    sandbox.commit()
    sandbox.install("claude")
    posted = threading.Event()
    model = MessagesServer(
        [
            call("Bash", command="git status --short", description="Look around"),
            call("Bash", command="git log --oneline", description="Read history"),
            say("Done."),
        ]
    )
    model.script[1].gate = posted
    with model:
        claude = sandbox.claude(model, "Tidy up checkout.py")
        model.script[1].wait_reached("Claude's request after its first command")
        sandbox.colony("post", "1", URGENT, "--urgent", "--as", "dana")
        posted.set()
        claude.finish()

    before, after = model.main_requests()[1:3]
    assert URGENT not in context(before)
    # It arrives with the result of the tool call made after the post (PostToolUse), once.
    messages = after["messages"]
    last_result = max(i for i, m in enumerate(messages) if _has_tool_result(m))
    assert URGENT not in context({"earlier": messages[:last_result]})
    assert context({"since": messages[last_result:]}).count(URGENT) == 1, messages[-2:]
    assert sandbox.hook_log() == ""
    assert claude.hook_problems() == []


def _has_tool_result(message: dict) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_result" for block in content
    )
