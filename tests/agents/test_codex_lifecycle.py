"""The lifecycle with the real Codex CLI: a spawned subagent's brief, the re-brief after
compaction.

Codex 0.169 offers its spawn tool (``spawn_agent`` in the ``collaboration`` namespace) only with
``features.multi_agent_v2``; the deprecated ``features.multi_agent`` (on by default) offers no
spawn tool to ``codex exec``. It compacts a session by itself once the context a model answer
reports passes ``model_auto_compact_token_limit``: with a custom provider it asks the same
Responses endpoint for a summary, then fires SessionStart with ``source`` = ``compact``.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from colony_tasks.store import Store
from colony_tasks.usecases import actions

from .capabilities import record
from .model_server import ResponsesServer, Step, context, say, texts
from .test_lifecycle import held_by_another

pytestmark = [pytest.mark.agents]

COMPACTION_PROMPT = "CONTEXT CHECKPOINT COMPACTION"


def addressed_to(task_name: str):
    """Requests of the subagent Codex spawned as ``task_name`` (its task arrives as an
    agent_message to it)."""

    def accepts(body: dict[str, Any]) -> bool:
        return any(
            item.get("type") == "agent_message" and item.get("recipient") == f"/root/{task_name}"
            for item in body.get("input", [])
        )

    return accepts


def codex_handle(sandbox) -> str:
    """The handle of the Codex session under test (not the holder a test registers)."""
    (me,) = [
        s
        for s in sandbox.colony_json("sessions")
        if s["agent"] == "codex" and s["id"] != "codex-holder"
    ]
    return me["handle"]


def compacting(body: dict[str, Any]) -> bool:
    return COMPACTION_PROMPT in texts(body)


def test_codex_spawned_subagents_first_request_carries_its_brief(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("codex")
    holder = held_by_another(sandbox, "prices.py")
    spawn = Step(
        tool="spawn_agent",
        namespace="collaboration",
        args={
            "task_name": "check_prices",
            "message": "Look at prices.py and report the tax rate.",
            "fork_turns": "none",
        },
    )
    wait = Step(tool="wait_agent", namespace="collaboration", args={"timeout_ms": 60000})
    subagent = say("The tax is 0.19.")
    model = ResponsesServer(
        [spawn, wait, say("Done.")], routes=((addressed_to("check_prices"), [subagent]),)
    )
    with model:
        run = sandbox.codex(model, "Ask a subagent about the tax", "features.multi_agent_v2=true")
        run.finish()

    first = context(subagent.wait_reached("the subagent's first request"))
    parent = codex_handle(sandbox)
    assert f"colony-tasks: you are a subagent (default) of {parent};" in first, run.output[-2000:]
    assert f"{holder} holds prices.py." in first
    # The parent's own requests carry no subagent brief.
    parents = [e.body for e in model.exchanges if e.step is not None and e.step is not subagent]
    assert len(parents) == 3 and all("you are a subagent" not in context(b) for b in parents)
    record("codex", sandbox.toolchain.version("codex"), "subagent_brief", "yes: spawn_agent")


def test_codex_compacted_session_is_rebriefed_with_what_is_new(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("codex")
    release = threading.Event()
    # The first answer reports a context past the limit: Codex compacts before going on.
    big = Step(tool="exec_command", args={"cmd": "true"}, tokens=50_000, gate=release)
    after = say("Done.")
    summary = say("Summary: looked around, ran true.")
    model = ResponsesServer([big, after], routes=((compacting, [summary]),))
    with model:
        run = sandbox.codex(model, "Look around", "model_auto_compact_token_limit=10000")
        big.wait_reached("Codex's first request")
        # What happens while the session works: the re-brief must tell it.
        holder = held_by_another(sandbox, "prices.py")
        store = Store(sandbox.data / "colony.db")
        actions.record_decision(store, "codex-holder", "Prices stay in cents from now on.")
        store.close()
        release.set()
        run.finish()

    assert COMPACTION_PROMPT in texts(summary.wait_reached("the compaction request"))
    request = context(after.wait_reached("the request after compaction"))
    me = codex_handle(sandbox)
    assert f"colony-tasks (re-brief: your context was reset): you are {me}" in request
    assert "New since you were last told:" in request
    assert "Prices stay in cents from now on." in request
    assert f"{holder} holds prices.py" in request
    # The first request had the ordinary brief, not the re-brief.
    first = context(big.request or {})
    assert f"colony-tasks: you are {me}" in first and "re-brief" not in first
    rebrief = "yes: SessionStart source=compact"
    record("codex", sandbox.toolchain.version("codex"), "rebrief_compaction", rebrief)
