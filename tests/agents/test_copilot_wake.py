"""An idle GitHub Copilot CLI session woken by colony-tasks' extension, with the real CLI offline.

Copilot runs command hooks only inside a turn; its extensions (experimental) run beside the
session. ``colony-tasks install --agent copilot`` writes ours to ``~/.copilot/extensions/``: when
its interactive session goes idle it holds one relay wait (``colony-tasks hook wait --agent
copilot``, a process of Copilot's extension host, bound to the Copilot process); a question
addressed to the session wakes it, and its next model request carries the question once.
Without Copilot's experimental features nothing is started.
"""

from __future__ import annotations

import json

import pytest

from .capabilities import record
from .model_server import ChatCompletionsServer, context, say
from .sandbox import Sandbox
from .terminal import Terminal, interactive_copilot
from .test_wake import QUESTION, _ask, _held, _session, _store, _until, wait_processes

pytestmark = pytest.mark.agents


def _experimental(sandbox: Sandbox, on: bool) -> None:
    """What ``copilot config experimental on`` writes (the user's choice; install does not)."""
    settings = sandbox.home / ".copilot" / "settings.json"
    settings.write_text(json.dumps({"experimental": on}) + "\n")


def _trust(terminal: Terminal) -> None:
    """Answer Copilot's first question, whether the repository's files are trusted: yes."""
    terminal.wait_for("the folder trust question", lambda: "Do you trust" in terminal.screen())
    terminal.send("Enter")


def test_an_idle_copilot_session_is_woken_by_a_question_and_reads_it_once(sandbox: Sandbox):
    sandbox.install("copilot")
    _experimental(sandbox, True)
    model = ChatCompletionsServer([say("Ready."), say("Port 8080."), say("Nothing more.")])
    question = QUESTION.format(n=1)
    with model, interactive_copilot(sandbox, model, "Stand by") as terminal:
        _trust(terminal)
        terminal.wait_for("the first answer", lambda: model.script[0].reached.is_set())
        _until("the idle session's wait", lambda: _held(sandbox, "copilot"))
        (waiter,) = wait_processes(sandbox)
        store = _store(sandbox)
        try:
            _, handle = _session(store, "copilot")
        finally:
            store.close()
        _ask(sandbox, handle, question)
        woken = model.script[1].wait_reached("the woken session's model request")
        # Its turn over, it idles again: a new wait is held, for the same session.
        _until("the next wait", lambda: _held(sandbox, "copilot") and wait_processes(sandbox))
        assert wait_processes(sandbox) != [waiter]
        assert len(model.main_requests()) == 2
    assert context(woken).count(question) == 1
    assert "colony-tasks — for you now:" in context(woken)
    _until("the waits to end with the session", lambda: not wait_processes(sandbox), 20)
    assert sandbox.hook_log() == ""
    version = sandbox.toolchain.version("copilot")
    record(
        "copilot",
        version,
        "wake_idle",
        "yes: its extension (experimental features on) prompts the idle session",
    )


def test_without_experimental_features_no_wait_is_started(sandbox: Sandbox):
    sandbox.install("copilot")
    _experimental(sandbox, False)
    model = ChatCompletionsServer([say("Ready.")])
    with model, interactive_copilot(sandbox, model, "Stand by") as terminal:
        _trust(terminal)
        terminal.wait_for("the first answer", lambda: model.script[0].reached.is_set())
        terminal.wait_for("the session", lambda: _session_known(sandbox))
        _ask(sandbox, "copilot", "Anyone there?")
        terminal.wait_for("the idle prompt", lambda: "Ready." in terminal.screen())
        assert not wait_processes(sandbox) and not _held(sandbox, "copilot")
    assert len(model.main_requests()) == 1


def _session_known(sandbox: Sandbox) -> bool:
    if not (sandbox.data / "colony.db").exists():
        return False
    store = _store(sandbox)
    try:
        return store._one("SELECT 1 FROM sessions WHERE agent = 'copilot'", ()) is not None
    finally:
        store.close()
