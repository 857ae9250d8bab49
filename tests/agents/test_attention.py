"""A Claude Code session waiting on its human, and a read of a file another session holds,
with the real CLI.

``Notification`` fires only from the interactive UI: ``claude -p`` never shows a prompt to
wait at, so it sends neither ``idle_prompt`` nor ``permission_prompt`` (its permission checks
deny without asking). These tests run the UI in a real terminal (:mod:`.terminal`).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from colony_tasks.store import Store
from colony_tasks.usecases import actions

from .model_server import MessagesServer, ResponsesServer, call, context, say
from .terminal import interactive_claude
from .test_lifecycle import held_by_another

pytestmark = [pytest.mark.agents]


def claude_waiting(sandbox) -> dict[str, Any] | None:
    if not (sandbox.data / "colony.db").exists():
        return None
    found = [s for s in sandbox.colony_json("sessions") if s["agent"] == "claude"]
    return found[0] if found and found[0]["waiting"] == "human" else None


def test_idle_claude_is_shown_waiting_on_its_human_until_it_acts_again(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("claude")
    sandbox.install("codex")
    release = threading.Event()
    answer = say("Done.", gate=release)
    model = MessagesServer([say("Hello there."), answer])
    with model, interactive_claude(sandbox, model, "Say hello", idle_ms=1500) as terminal:
        me = terminal.wait_for("Notification idle_prompt", lambda: claude_waiting(sandbox))
        assert "Notification:idle_prompt" in terminal.debug.read_text()
        assert "waiting on its human" in sandbox.colony("sessions")
        # Another agent that starts now is told so in its brief.
        codex_model = ResponsesServer([say("Done.")])
        with codex_model:
            sandbox.codex(codex_model, "Look around").finish()
        brief = context(codex_model.main_requests()[0])
        assert f"{me['handle']} (claude, " in brief and "waiting on its human" in brief

        # Its human answers: the prompt's events clear the state while the model works.
        terminal.send("Thanks", "Enter")
        answer.wait_reached("Claude's second request")
        mine = [s for s in sandbox.colony_json("sessions") if s["handle"] == me["handle"]]
        assert not mine[0]["waiting"], mine
        release.set()


def test_a_permission_dialog_shows_claude_waiting_on_its_human(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("claude")
    model = MessagesServer([call("Bash", command="touch made.txt", description="Make a file")])
    with (
        model,
        interactive_claude(
            sandbox, model, "Make a file", "--permission-mode", "default"
        ) as terminal,
    ):
        terminal.wait_for("the permission dialog", lambda: "Do you want" in terminal.screen())
        terminal.wait_for("Notification permission_prompt", lambda: claude_waiting(sandbox))
        assert "Notification:permission_prompt" in terminal.debug.read_text()
    assert not (sandbox.repo / "made.txt").exists()


def test_claude_reading_a_held_file_is_told_once_who_holds_it_and_the_decision(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.write("notes.md", "nothing\n")
    sandbox.commit()
    sandbox.install("claude")
    holder = held_by_another(sandbox, "prices.py")
    store = Store(sandbox.data / "colony.db")
    actions.record_decision(store, "codex-holder", "prices.py keeps amounts in cents.")
    store.close()
    prices = str(sandbox.repo / "prices.py")
    model = MessagesServer(
        [
            call("Read", file_path=prices),
            call("Read", file_path=prices),
            call("Read", file_path=str(sandbox.repo / "notes.md")),
            say("Done."),
        ]
    )
    with model:
        run = sandbox.claude(model, "Read the prices").finish()

    requests = [context(body) for body in model.main_requests()]
    note = f"colony-tasks: prices.py is held by {holder} (claimed since "
    assert note in requests[1], run.debug[-2000:]
    assert "latest decision naming it: #" in requests[1]
    assert '"prices.py keeps amounts in cents."' in requests[1]
    assert f'Before editing it: ask_question(to="{holder}", ...)' in requests[1]
    # Once per session and file: the second read adds nothing, nor does an unheld file.
    assert requests[3].count(note) == 1
