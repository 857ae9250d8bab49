"""Waking an idle Codex session through its shared app-server, with the real Codex CLI.

A client attaches to ``codex app-server daemon`` as the TUI does, starts a thread and a turn,
and idles. A question addressed to that session makes the relay run ``codex queue`` for its
thread: the thread starts a turn by itself whose input is the short wake note, and answers.
"""

from __future__ import annotations

import time

import pytest

from colony_tasks.store import Store, open_store
from colony_tasks.usecases import actions

from .capabilities import record
from .codex_daemon import Client, Daemon, configure
from .model_server import ResponsesServer, context, say
from .sandbox import Sandbox

pytestmark = pytest.mark.agents

QUESTION = "Which port does the payments API listen on?"


def _store(sandbox: Sandbox) -> Store:
    return open_store(str(sandbox.data / "colony.db"))


def _until(what: str, check, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _codex_session(sandbox: Sandbox) -> tuple[str, str, bool] | None:
    """(id, handle, whether a wake is held for it) of the Codex session, once it exists."""
    if not (sandbox.data / "colony.db").exists():
        return None
    store = _store(sandbox)
    try:
        row = store._one("SELECT id, handle, wake_since FROM sessions WHERE agent = 'codex'")
        return (row[0], row[1], row[2] is not None) if row else None
    finally:
        store.close()


def test_an_idle_codex_thread_on_the_daemon_is_woken_by_a_question(sandbox: Sandbox):
    sandbox.write("pay.py", "PORT = 0\n")
    sandbox.commit()
    sandbox.install("codex")
    model = ResponsesServer([say("Ready."), say("It is 8080.")])
    with model:
        configure(sandbox, model)
        with Daemon(sandbox) as daemon:
            client = Client(daemon)
            try:
                client.initialize()
                started = client.call(
                    "thread/start",
                    {"cwd": str(sandbox.repo), "config": {"bypass_hook_trust": True}},
                )
                thread_id = started["thread"]["id"]
                client.call(
                    "turn/start",
                    {"threadId": thread_id, "input": [{"type": "text", "text": "Own pay.py"}]},
                )
                client.wait(lambda m: m.get("method") == "turn/completed", "the first turn")
                _until(
                    "the idle Codex session watched",
                    lambda: (_codex_session(sandbox) or ("", "", False))[2],
                )
                session_id, handle, _ = _codex_session(sandbox) or ("", "", False)
                assert session_id == thread_id

                store = _store(sandbox)
                try:
                    asked = actions.as_human(
                        store,
                        "dana",
                        str(sandbox.repo),
                        lambda me: actions.ask(store, me, QUESTION, to=handle),
                    )
                finally:
                    store.close()

                woken = context(model.script[1].wait_reached("the woken turn's request"))
                client.wait(
                    lambda m: (
                        m.get("method") == "turn/completed" and client.count("turn/completed") >= 2
                    ),
                    "the woken turn to complete",
                )
            finally:
                client.close()
    woken_at = woken.find("colony-tasks: dana asked you a question")
    print("woken request:", woken[max(0, woken_at - 200) : woken_at + 300])
    print("thread events after the first turn:", _events_after_first_turn(client))
    assert woken_at >= 0
    assert QUESTION not in woken  # the note names the item; its text stays off the command line
    note = _items(client, "userMessage")[-1]
    assert f"asked you a question (#{asked.id})" in note
    assert _items(client, "agentMessage")[-1] == "It is 8080."
    assert client.count("turn/started") == 2
    recipient = _recipient(sandbox, asked.id)
    assert (recipient["state"], recipient["via"]) == ("delivered", "wake")
    assert sandbox.hook_log() == ""
    record(
        "codex",
        sandbox.toolchain.version("codex"),
        "wake_idle",
        "yes: codex queue through its app-server daemon (a daemon-hosted thread)",
    )


def _items(client: Client, kind: str) -> list[str]:
    """The texts of the thread's completed items of ``kind``, in order."""
    found = []
    for message in client.messages:
        item = (message.get("params") or {}).get("item") or {}
        if message.get("method") == "item/completed" and item.get("type") == kind:
            parts = item.get("content") or [{"text": item.get("text", "")}]
            found.append("".join(str(p.get("text", "")) for p in parts))
    return found


def _events_after_first_turn(client: Client) -> list[str]:
    methods = [str(m.get("method")) for m in client.messages if "method" in m]
    first = methods.index("turn/completed")
    keep = ("turn/", "thread/queue", "item/completed")
    return [m for m in methods[first + 1 :] if m.startswith(keep)]


def _recipient(sandbox: Sandbox, question: int) -> dict:
    store = _store(sandbox)
    try:
        (row,) = store.recipients(question)
        return row
    finally:
        store.close()
