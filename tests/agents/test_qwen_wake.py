"""An idle Qwen Code session woken through its own cross-session inbox, with the real CLI offline.

``colony-tasks install --agent qwen`` adds a background (``"async": true``) Stop handler: when
a turn of the interactive session ends it holds one relay wait (``colony-tasks hook wait
--agent qwen``, bound to the Qwen process); a question addressed to the session sends it to
the session's inbox with the token Qwen gives the processes it starts, and the idle session
takes it as its next turn, reading it once. With the user's ``agents.crossSessionInbound`` at
``refuse`` the message is turned away and the session stays idle.
"""

from __future__ import annotations

import pytest

from .capabilities import record
from .model_server import ChatCompletionsServer, context, say
from .sandbox import Sandbox
from .terminal import interactive_qwen
from .test_wake import QUESTION, _ask, _held, _session, _store, _until, wait_processes

pytestmark = pytest.mark.agents


def _woken_by_a_question(sandbox: Sandbox, model: ChatCompletionsServer) -> str:
    """Wait for the idle session's wait and ask it a question; the question."""
    _until("the idle session's wait", lambda: _held(sandbox, "qwen") and wait_processes(sandbox))
    store = _store(sandbox)
    try:
        _, handle = _session(store, "qwen")
    finally:
        store.close()
    question = QUESTION.format(n=1)
    _ask(sandbox, handle, question)
    return question


def test_an_idle_qwen_session_is_woken_by_a_question_and_reads_it_once(sandbox: Sandbox):
    sandbox.install("qwen")
    model = ChatCompletionsServer([say("Ready."), say("Port 8080."), say("Nothing more.")])
    with model, interactive_qwen(sandbox, model, "Stand by") as terminal:
        terminal.wait_for("the first answer", lambda: model.script[0].reached.is_set())
        question = _woken_by_a_question(sandbox, model)
        waiter = wait_processes(sandbox)
        woken = model.script[1].wait_reached("the woken session's model request")
        # Its turn over, it idles again: a new wait is held, for the same session.
        _until("the next wait", lambda: _held(sandbox, "qwen") and wait_processes(sandbox))
        assert wait_processes(sandbox) != waiter
        assert len(model.main_requests()) == 2
    assert context(woken).count(question) == 1
    assert "colony-tasks — for you now:" in context(woken)
    assert 'origin="own-process"' in context(woken)
    print("\nthe woken request:", context(woken)[-900:])
    _until("the waits to end with the session", lambda: not wait_processes(sandbox), 20)
    assert sandbox.hook_log() == ""
    version = sandbox.toolchain.version("qwen")
    record(
        "qwen",
        version,
        "wake_idle",
        "yes: its background Stop hook sends the item to the idle session's own"
        " cross-session inbox, which starts a turn",
    )
