"""One row per agent event (colony_tasks.base.agent_events.EVENTS): every layer that needs to
know an event reads the row, and the wire carries it as a typed record."""

from __future__ import annotations

import json

import pytest

from colony_tasks.base.agent_events import EVENTS, TOOL_ACTIONS
from colony_tasks.hooks import payload, runner
from colony_tasks.install import hookblock
from colony_tasks.relay import apply as apply_mod
from colony_tasks.relay.apply import BadRequest, parse
from colony_tasks.relay.wire import EventRequest, ToolCall
from colony_tasks.usecases import events


def test_every_event_has_exactly_one_use_case():
    assert set(events.USE_CASES) == set(EVENTS)


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_the_installer_installs_the_events_the_table_gives_each_agent(agent: str):
    installed = {e.slug: e.name for e in hookblock.events_for(agent)}
    expected = {slug: row.names[agent] for slug, row in EVENTS.items() if agent in row.names}
    assert installed == expected


def test_only_the_events_that_bind_a_session_to_its_agent_pay_for_the_exact_process():
    assert {slug for slug, row in EVENTS.items() if row.owner} == {"session-start", "session-end"}


def test_the_quiet_events_are_the_ones_applied_without_an_idempotency_key():
    assert {slug for slug, row in EVENTS.items() if row.quiet} == events.QUIET
    assert set(EVENTS) - events.QUIET == events.DEDUPED
    assert events.fingerprinted("user-prompt-submit") and not events.fingerprinted("stop")


def test_a_request_passes_on_the_rows_fields_with_their_defaults():
    started = payload.request("session-start", "claude", {"session_id": "s", "cwd": "/r"}, b"{}")
    assert started.fields == {"source": "startup"}
    held = payload.request("stop", "codex", {"session_id": "s", "stop_hook_active": True}, b"{}")
    assert held.fields == {"active": True}
    # A flag is true only when the payload says true, not for a truthy string.
    said = payload.request("stop", "codex", {"session_id": "s", "stop_hook_active": "yes"}, b"{}")
    assert said.fields == {"active": False}
    ended = payload.request("session-end", "claude", {"session_id": "s", "source": "x"}, b"{}")
    assert ended.fields == {} and ended.tool is None


def test_a_tool_event_carries_its_tool_call_in_the_cores_terms():
    edit = payload.request(
        "pre-tool-use",
        "claude",
        {"session_id": "s", "tool_name": "Edit", "tool_input": {"file_path": "/r/a.py"}},
        b"{}",
    )
    assert edit.tool is not None
    assert (edit.tool.name, edit.tool.action, edit.tool.paths) == ("Edit", "edit", ["/r/a.py"])
    bash = payload.request(
        "post-tool-use",
        "codex",
        {"session_id": "s", "tool_name": "Bash", "tool_input": {"command": ["ls", "-l"]}},
        b"{}",
    )
    assert bash.tool is not None and (bash.tool.action, bash.tool.command) == ("shell", "ls -l")


def test_the_wire_record_round_trips():
    sent = EventRequest(
        "post-tool-use-failure",
        "claude",
        session="s",
        cwd="/r",
        pid=42,
        subagent="Explore 1a2b3c4d",
        key="k",
        at=12.5,
        tool=ToolCall("Bash", "shell", [], "make", "t1"),
    )
    got = parse(json.loads(json.dumps(sent.to_wire())))
    assert got.to_wire() == sent.to_wire()


def test_a_request_spooled_before_the_typed_record_is_still_read():
    """An outbox written by a 0.3 hook holds the positional tool list and top-level fields."""
    old = {
        "op": "event",
        "event": "post-tool-use",
        "agent": "codex",
        "session": "s",
        "cwd": "/r",
        "pid": 7,
        "subagent": "",
        "key": "k",
        "at": 1.0,
        "tool": ["apply_patch", "edit", ["a.py"], "", "u1"],
    }
    got = parse(old)
    assert got.tool is not None and got.tool.to_wire() == {
        "name": "apply_patch",
        "action": "edit",
        "paths": ["a.py"],
        "command": "",
        "use_id": "u1",
    }
    prompt = parse({"event": "user-prompt-submit", "prompt": "hello"})
    assert prompt.fields == {"prompt": "hello"}


@pytest.mark.parametrize(
    ("request_", "why"),
    [
        ({"event": "no-such-event"}, "unknown event"),
        ({"event": "pre-tool-use"}, "needs a tool"),
        ({"event": "pre-tool-use", "tool": {"name": "X", "action": "fly", "paths": []}}, "tool"),
        ({"event": "pre-tool-use", "tool": {"name": "X", "action": "edit", "paths": "a"}}, "tool"),
        ({"event": "pre-tool-use", "tool": "Edit"}, "tool"),
    ],
)
def test_a_malformed_request_is_refused_with_a_reason(request_: dict, why: str):
    with pytest.raises(BadRequest, match=why):
        apply_mod.event_values(request_)


def test_every_tool_action_is_one_the_core_knows():
    for name in ("Edit", "apply_patch", "Read", "Bash", "WebFetch"):
        call = payload.tool_use({"tool_name": name, "tool_input": {}})
        assert call.action in TOOL_ACTIONS


class Recording:
    """A transport that records what it is sent and answers ``reply``."""

    def __init__(self, reply: dict | None) -> None:
        self.reply = reply
        self.sent: list[EventRequest] = []

    def __call__(self, request: EventRequest) -> dict | None:
        self.sent.append(request)
        return self.reply


def test_a_hook_sends_its_event_through_the_transport_it_is_given():
    via = Recording({"context": "hello from the thread"})
    raw = json.dumps({"session_id": "s", "cwd": "/r", "prompt": "go"}).encode()
    out = runner.handle("user-prompt-submit", "claude", raw, transport=via)
    assert [r.event for r in via.sent] == ["user-prompt-submit"]
    assert via.sent[0].fields == {"prompt": "go"}
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "hello from the thread",
        }
    }


@pytest.mark.parametrize("slug", sorted(s for s, row in EVENTS.items() if row.quiet))
def test_a_quiet_events_context_never_reaches_the_model(slug: str):
    via = Recording({"context": "not for the model"})
    raw = json.dumps({"session_id": "s", "cwd": "/r"}).encode()
    out = runner.handle(slug, "claude", raw, transport=via)
    # Stop shows it to the human (a systemMessage), never as the model's context.
    assert out is None or "hookSpecificOutput" not in out
