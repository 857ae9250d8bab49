"""OpenCode beside Claude Code on one lane, both real CLIs, offline.

OpenCode runs ``opencode run`` against a scripted OpenAI chat-completions server with our
generated plugin installed (``~/.config/opencode/plugins/colony-tasks.js``); OpenCode has no
channel to the model before a tool runs, so the plugin appends the pre-tool warning to the
tool's result. ``opencode serve`` (its HTTP API) drives a session that idles between prompts,
for the wake.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from . import scenarios
from .capabilities import record, transcript
from .model_server import ChatCompletionsServer, context, say
from .scenarios import OPENCODE, QUESTION, chars_per_turn, warning
from .test_wake import _ask, wait_processes

pytestmark = pytest.mark.agents


def version(sandbox) -> str:
    return sandbox.toolchain.versions["opencode-ai"]


def test_opencode_editing_the_line_claude_just_changed_is_warned(sandbox):
    pair = scenarios.other_edits_after_claude(sandbox, OPENCODE)

    claude_handle = pair.held
    opencode_handle = sandbox.session("opencode")["handle"]
    first, after_edit = pair.other_model.main_requests()[:2]
    assert claude_handle in context(first), "OpenCode's briefing does not name the Claude session"
    assert context(after_edit).count(warning("prices.py", "L1", claude_handle)) == 1
    assert (sandbox.repo / "prices.py").read_text() == "TAX = 0.21\n"
    edits = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "edit"]
    assert [(o["handle"], o["text"]) for o in edits] == [
        (claude_handle, "prices.py (Edit)"),
        (opencode_handle, "prices.py (edit)"),
    ]
    assert sandbox.hook_log() == ""
    transcript("opencode", version(sandbox), "briefing", context(first), claude_handle)
    transcript("opencode", version(sandbox), "after its edit", context(after_edit), claude_handle)
    record("opencode", version(sandbox), "briefing", "yes")
    record("opencode", version(sandbox), "warn_before", "after the tool (no channel before)")
    record("opencode", version(sandbox), "warn_after", "yes: with the tool's result")
    chars = chars_per_turn(pair.other_model.main_requests())
    record("opencode", version(sandbox), "chars_per_turn", chars)


def test_claude_editing_the_line_opencode_just_changed_is_warned(sandbox):
    pair = scenarios.claude_edits_after_other(sandbox, OPENCODE)

    handle = pair.held
    first, after_edit = pair.claude_model.main_requests()[:2]
    assert f"{handle} (opencode" in context(first)
    assert warning("prices.py", "L1", handle) in context(after_edit)
    assert sandbox.hook_log() == ""


def test_a_question_from_claude_reaches_opencode_mid_turn(sandbox):
    pair = scenarios.question_from_claude(sandbox, OPENCODE)

    first, after_bash = pair.other_model.main_requests()[:2]
    assert QUESTION not in context(first)
    assert context(after_bash).count(QUESTION) == 1
    record("opencode", version(sandbox), "mid_turn", "yes")


def test_a_question_from_opencode_reaches_claude_mid_turn(sandbox):
    pair = scenarios.question_to_claude(sandbox, OPENCODE)

    (question,) = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "question"]
    assert question["session_id"] == sandbox.session("opencode")["id"]
    assert context(pair.claude_model.main_requests()[1]).count(QUESTION) == 1
    record("opencode", version(sandbox), "mcp_tools", "yes")


def _api(port: int, method: str, path: str, body: dict | None = None) -> Any:
    """One call of OpenCode's HTTP API (``opencode serve``), its JSON reply."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=data,
        method=method,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=20) as reply:
        text = reply.read().decode()
    return json.loads(text) if text.strip() else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _until(what: str, check, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_an_idle_opencode_session_is_woken_by_a_question_and_reads_it_once(sandbox):
    """``opencode serve`` keeps the session after its turn (idle, as in the TUI): our plugin
    holds a wait in the relay, and a question addressed to the session makes it prompt the
    session (``client.session.promptAsync``); the next model request carries the question,
    once. Deleting the session ends the wait."""
    sandbox.write("pay.py", "PORT = 0\n")
    sandbox.commit()
    sandbox.install("opencode")
    port = _free_port()
    model = ChatCompletionsServer([say("Ready."), say("It is 8080."), say("Noted.")])
    with model:
        served = sandbox.opencode_serve(model, port)
        try:
            _until("the server", lambda: _answers(port))
            session = _api(port, "POST", "/session", {})["id"]
            _api(port, "POST", f"/session/{session}/message", _text("Look after pay.py"))
            handle = sandbox.session("opencode")["handle"]
            _until("the idle session's wait", lambda: len(wait_processes(sandbox)) == 1)
            _ask(sandbox, handle, QUESTION)
            woken = context(model.script[1].wait_reached("the woken request"))
            assert woken.count(QUESTION) == 1
            _until("the woken turn's wait", lambda: len(wait_processes(sandbox)) == 1)
            _api(port, "POST", f"/session/{session}/message", _text("Anything else?"))
            assert context(model.script[2].request or {}).count(QUESTION) == 1  # in history only
            _api(port, "DELETE", f"/session/{session}")
            _until("the wait to end", lambda: not wait_processes(sandbox), timeout=20)
            _until("the session's end", lambda: sandbox.session("opencode")["ended_at"])
            # Its MCP server stops while OpenCode still runs (a kill would orphan it first).
            assert _mcp_servers(sandbox)
            _api(port, "POST", "/instance/dispose")
            _until("the MCP server's exit", lambda: not _mcp_servers(sandbox), timeout=20)
        finally:
            served.process.terminate()
            served.process.communicate(timeout=30)
    assert sandbox.hook_log() == ""
    record("opencode", version(sandbox), "wake_idle", "yes: our plugin prompts the idle session")


def _mcp_servers(sandbox) -> list[int]:
    """Live ``colony-tasks mcp`` processes of this sandbox, from the process table."""
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            args = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            environ = Path(f"/proc/{name}/environ").read_bytes()
        except OSError:
            continue
        if str(sandbox.data).encode() in environ and b"mcp" in args[1:] and b"hook" not in args:
            found.append(int(name))
    return found


def _answers(port: int) -> bool:
    try:
        _api(port, "GET", "/session")
    except OSError:
        return False
    return True


def _text(prompt: str) -> dict[str, Any]:
    return {"parts": [{"type": "text", "text": prompt}]}
