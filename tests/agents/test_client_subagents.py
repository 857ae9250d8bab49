"""Subagent brief for the clients beside Claude Code, each with its real CLI, offline.

The session's model starts a subagent with its own tool (Gemini CLI's ``invoke_agent``, Qwen
Code's ``agent``, Copilot CLI's and OpenCode's ``task``) while another session holds
``prices.py``; the subagent's first model request shows what it was told.

- Copilot CLI: its subagentStart hook's context reaches the subagent, whose own hooks name
  their parent session (so the subagent is its parent's, as Claude Code's are).
- Qwen Code 0.24.4 fires SubagentStart but does not pass its context on to the subagent (so
  colony-tasks installs no SubagentStart hook there).
- Gemini CLI 0.61.0 has no subagent hook event at all (its hook event names, from its bundle).
- OpenCode runs the subagent as a child session whose first message goes through our plugin's
  ``chat.message``: the plugin sends it as its parent's subagent (SubagentStart's brief, its
  tool calls its parent's, naming it), not as a session of its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from colony_tasks.base.agent_events import event_name

from .capabilities import record
from .model_server import ScriptedServer, Step, call, context, say
from .scenarios import COPILOT, GEMINI, OPENCODE, QWEN, Client
from .test_lifecycle import held_by_another

pytestmark = pytest.mark.agents

PROMPT = "Look at prices.py and report the tax rate."
BRIEF = "you are a subagent ("
SPAWN: dict[str, Step] = {
    "gemini": call("invoke_agent", agent_name="generalist", prompt=PROMPT),
    "qwen": call(
        "agent",
        description="Check prices",
        prompt=PROMPT,
        subagent_type="general-purpose",
        run_in_background=False,
    ),
    "copilot": call(
        "task", description="Check prices", prompt=PROMPT, agent_type="task", name="checker"
    ),
    "opencode": call("task", description="Check prices", prompt=PROMPT, subagent_type="general"),
}


def _spawn(
    sandbox,
    client: Client,
    after_install: Callable[[], None] = lambda: None,
    subagent_steps: list[Step] | None = None,
) -> tuple[str, str, ScriptedServer]:
    """Runs the client's session, whose model starts a subagent (which takes
    ``subagent_steps``, by default one answer); the holder of prices.py, the subagent's first
    request and the model server."""
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install(client.agent)
    after_install()
    holder = held_by_another(sandbox, "prices.py")
    steps = subagent_steps or [say("The tax is 0.19.")]
    model = client.server([SPAWN[client.agent], *steps, say("Done.")])
    with model:
        run = getattr(sandbox, client.agent)(model, "Ask a subagent about the tax").finish()
    first = context(model.script[1].wait_reached("the subagent's first request"))
    assert PROMPT in first, run.output[-2000:]  # the request is the subagent's
    return holder, first, model


def test_a_copilot_subagent_is_briefed_and_acts_as_its_sessions_subagent(sandbox):
    """Copilot CLI runs the subagent as a session of its own; its hooks name the parent
    (``parentAgentId``), so its edit is the parent's, naming it, and no second session is
    registered."""
    noted = sandbox.repo / "notes.txt"
    steps = [call("create", path=str(noted), file_text="tax 0.19\n"), say("The tax is 0.19.")]
    holder, first, model = _spawn(sandbox, COPILOT, subagent_steps=steps)

    parent = sandbox.session("copilot")["handle"]  # one colony session, not two
    assert f"colony-tasks: you are {parent} " in context(model.main_requests()[0])
    assert f"{BRIEF}task) of {parent};" in first
    assert f"{holder} holds prices.py." in first
    edits = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "edit"]
    assert [o["handle"] for o in edits] == [parent]
    assert re.fullmatch(r"notes\.txt \(create, subagent task \w{8}\)", edits[0]["text"])
    assert sandbox.hook_log() == ""
    hook = event_name("subagent-start", "copilot")
    record("copilot", sandbox.toolchain.version("copilot"), "subagent_brief", f"yes: {hook}")


def test_qwen_runs_subagent_start_but_its_subagent_is_not_told(sandbox):
    """Our installer gives Qwen Code no SubagentStart hook: a hook of the user's own, that
    answers with context as Qwen's hook docs say, shows the event fires and its context is
    dropped."""
    fired = sandbox.home / "subagent-started"
    said = "Subagent note from a SubagentStart hook."
    reply = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": said}}
    )
    hook = {"type": "command", "command": f"touch {fired}; echo '{reply}'", "timeout": 10}

    def add_hook() -> None:
        settings = sandbox.home / ".qwen" / "settings.json"
        data = json.loads(settings.read_text())
        data["hooks"]["SubagentStart"] = [{"hooks": [hook]}]
        settings.write_text(json.dumps(data, indent=2))

    holder, first, _ = _spawn(sandbox, QWEN, add_hook)

    assert fired.exists(), "Qwen Code did not fire SubagentStart"
    assert said not in first
    assert BRIEF not in first and f"{holder} holds prices.py" not in first
    record(
        "qwen",
        sandbox.toolchain.version("qwen"),
        "subagent_brief",
        "no: SubagentStart fires, its context does not reach the subagent",
    )


def _gemini_hook_events(sandbox) -> list[str]:
    """The hook event names Gemini CLI knows (its HookEventName enum, from its bundle)."""
    bundle = Path(sandbox.toolchain.gemini).resolve().parent
    for chunk in sorted(bundle.glob("*.js")):
        text = chunk.read_text(errors="replace")
        found = re.search(r"var HookEventName = .*?return HookEventName2;", text, re.S)
        if found:
            return re.findall(r'HookEventName2\["(\w+)"\]', found.group(0))
    raise AssertionError("Gemini CLI's bundle no longer defines HookEventName")


def test_gemini_has_no_subagent_event_and_its_subagent_is_not_told(sandbox):
    holder, first, _ = _spawn(sandbox, GEMINI)

    assert BRIEF not in first and f"{holder} holds prices.py" not in first
    events = _gemini_hook_events(sandbox)
    assert "SessionStart" in events and "BeforeTool" in events
    assert not [
        e for e in events if "agent" in e.lower() and e not in ("BeforeAgent", "AfterAgent")
    ]
    record(
        "gemini",
        sandbox.toolchain.version("gemini"),
        "subagent_brief",
        "no: no subagent hook event",
    )


def test_an_opencode_subagent_is_briefed_as_its_sessions_subagent(sandbox):
    """OpenCode runs the subagent as a child session; our plugin sends it as its parent's
    subagent: briefed as one, its edit recorded as the parent's, naming it."""
    noted = sandbox.repo / "notes.txt"
    steps = [call("write", filePath=str(noted), content="tax 0.19\n"), say("The tax is 0.19.")]
    holder, first, _ = _spawn(sandbox, OPENCODE, subagent_steps=steps)

    parent = sandbox.session("opencode")["handle"]  # one colony session, not two
    assert f"{BRIEF}general) of {parent};" in first
    assert f"{holder} holds prices.py." in first
    assert f"you are {parent} " not in first
    edits = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "edit"]
    assert [o["handle"] for o in edits] == [parent]
    assert re.fullmatch(r"notes\.txt \(write, subagent general \w{8}\)", edits[0]["text"])
    assert sandbox.hook_log() == ""
    record(
        "opencode",
        sandbox.toolchain.version("opencode"),
        "subagent_brief",
        "yes: chat.message of the child session (our plugin sends subagent-start)",
    )
