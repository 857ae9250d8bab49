"""Waking an idle Codex session through its app-server: which sessions are watched, the
watch's delivery under the core's wake rules, and the short note it queues."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from colony_tasks.base.models import Observation
from colony_tasks.domain import sessions
from colony_tasks.relay import codex_queue
from colony_tasks.relay.waits import Waits
from colony_tasks.render import briefing
from colony_tasks.store import Store
from colony_tasks.usecases import actions
from tests.support.helpers import join

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")

#: Stands in for ``codex app-server``: ``<exe> <script> app-server daemon``, sleeping.
IDLE = "import time; time.sleep(30)\n"


@pytest.fixture
def fake_server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen, Path]]:
    """A process started as ``<exe> app-server ...`` with CODEX_HOME in its environment."""
    codex_home = tmp_path / "codex-home-with-a-long-enough-name" / ("x" * 60)
    (codex_home / "app-server-control").mkdir(parents=True)
    script = tmp_path / "idle.py"
    script.write_text(IDLE)
    agent = subprocess.Popen(
        [sys.executable, str(script), "app-server", "daemon"],
        env={"CODEX_HOME": str(codex_home), "HOME": str(tmp_path)},
    )
    deadline = time.monotonic() + 10
    while str(script) not in (codex_queue.procs.command_line(agent.pid) or []):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    yield agent, codex_home
    agent.kill()
    agent.wait()


def _listen(codex_home: Path) -> socket.socket:
    folder = os.open(codex_home / "app-server-control", os.O_PATH | os.O_DIRECTORY)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(f"/proc/self/fd/{folder}/app-server-control.sock")
    finally:
        os.close(folder)
    server.listen(4)
    return server


def test_only_an_app_server_whose_control_socket_answers_is_a_target(fake_server):
    agent, codex_home = fake_server
    assert codex_queue.target(None) is None
    assert codex_queue.target(os.getpid()) is None  # not an app-server (codex exec, a TUI)
    assert codex_queue.target(agent.pid) is None  # no daemon socket
    with _listen(codex_home):
        found = codex_queue.target(agent.pid)
        assert found is not None
        assert found.exe == os.path.realpath(sys.executable)
        assert found.codex_home == str(codex_home)
    assert codex_queue.target(agent.pid) is None  # the socket file stays; nobody answers


def _until(check, what: str) -> None:
    deadline = time.monotonic() + 10
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _wake_since(store: Store, session_id: str) -> float | None:
    return store._one("SELECT wake_since FROM sessions WHERE id = ?", (session_id,))[0]


def _watched(store: Store, repo: Path, reached: bool):
    idle = sessions.register(
        store, "thread-1", agent="codex", cwd=str(repo), agent_pid=os.getpid()
    ).session
    asker = join(store, "asker-1", "claude", repo).session
    waits = Waits(lambda: store)
    delivered: list[list[int]] = []
    done = threading.Event()

    def deliver(items: Sequence[Observation]) -> bool:
        delivered.append([o.id for o in items])
        done.set()
        return reached

    assert waits.watch(store, idle.id, os.getpid(), deliver)
    assert _wake_since(store, idle.id) is not None  # senders are told it is being woken
    return idle, asker, waits, delivered, done


def test_a_watch_delivers_a_question_once_and_ends(store: Store, repo: Path):
    idle, asker, waits, delivered, done = _watched(store, repo, reached=True)
    with store.transaction():  # both at once: the watch must not see the first alone
        actions.ask(store, asker.id, "Port?", to=idle.handle)
        asked = actions.ask(store, asker.id, "Port?", to=idle.handle)
    waits.nudge()
    assert done.wait(10)
    _until(lambda: not waits.waiters, "the watch to end")
    assert asked.id in delivered[0] and len(delivered) == 1
    assert {r["via"] for r in store.recipients(asked.id)} == {"wake"}
    assert _wake_since(store, idle.id) is None


def test_a_failed_delivery_leaves_the_items_for_the_next_turn(store: Store, repo: Path):
    idle, asker, waits, delivered, done = _watched(store, repo, reached=False)
    asked = actions.ask(store, asker.id, "Port?", to=idle.handle)
    waits.nudge()
    assert done.wait(10)
    _until(lambda: store.recipients(asked.id)[0]["state"] == "pending", "the unclaim")
    assert delivered == [[asked.id]]


def test_chatter_and_a_resumed_session_end_nothing_delivered(store: Store, repo: Path):
    idle, asker, waits, delivered, _ = _watched(store, repo, reached=True)
    actions.post(store, asker.id, "FYI: deploy at 5")
    waits.nudge()
    time.sleep(0.5)
    assert delivered == [] and idle.id in waits.waiters
    waits.saw({"session": idle.id, "event": "user-prompt"})
    actions.ask(store, asker.id, "Port?", to=idle.handle)
    waits.nudge()
    _until(lambda: not waits.waiters, "the watch to end")
    assert delivered == []


def test_only_a_codex_stop_of_a_session_hosted_by_an_app_server_is_watched(
    store: Store, repo: Path
):
    idle = sessions.register(
        store, "thread-2", agent="codex", cwd=str(repo), agent_pid=os.getpid()
    ).session
    waits = Waits(lambda: store)
    stop = {"event": "stop", "agent": "codex", "session": idle.id, "pid": os.getpid()}
    assert not codex_queue.watch(waits, store, stop)  # this process is no app-server
    assert not codex_queue.watch(waits, store, {**stop, "event": "post-tool-use"})
    assert not codex_queue.watch(waits, store, {**stop, "pid": os.getpid() + 1})
    assert waits.waiters == {}


def test_the_wake_note_names_sender_kind_and_id_but_not_the_text(store: Store, repo: Path):
    idle = join(store, "idle-2", "codex", repo).session
    asker = join(store, "asker-2", "claude", repo).session
    asked = actions.ask(store, asker.id, "The secret plan is X", to=idle.handle)
    (item,) = [o for o in store.pending_wake(idle.id, ("question",), ()) if o.id == asked.id]
    note = briefing.wake_note([item])
    assert note.startswith(f"colony-tasks: {asker.handle} asked you a question (#{asked.id})")
    assert f"get_observations(ids=[{asked.id}])" in note
    assert "secret" not in note
