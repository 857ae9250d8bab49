"""Waking an idle Qwen Code session through its cross-session inbox: what ``hook wait --agent
qwen`` writes to the socket, to which socket only, and when it waits at all."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from colony_tasks.hooks import qwen_inbox
from tests.support.hookrun import EXE


@pytest.fixture
def listener(tmp_path: Path):
    """A Unix socket standing in for a session's inbox; what each connection wrote."""
    path = tmp_path / "inbox.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    server.settimeout(10)
    received: list[bytes] = []

    def serve() -> None:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        with conn:
            data = b""
            while chunk := conn.recv(4096):
                data += chunk
            received.append(data)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, received, thread
    server.close()


def _env(path: Path) -> dict[str, str]:
    return {qwen_inbox.SOCKET_ENV: str(path), qwen_inbox.TOKEN_ENV: "c" * 64}


def test_a_wake_is_the_auth_line_and_one_user_frame_for_the_session(listener):
    path, received, thread = listener
    assert qwen_inbox.send(_env(path), "sess-1", "colony-tasks — for you now: Port?")
    thread.join(10)
    auth, frame = (json.loads(line) for line in received[0].decode().splitlines())
    assert auth == {"msgV": 1, "type": "auth", "token": "c" * 64}
    assert frame["type"] == "user" and frame["msgV"] == 1 and frame["toSessionId"] == "sess-1"
    assert frame["message"] == {"role": "user", "content": "colony-tasks — for you now: Port?"}
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}", frame["msgId"])
    assert qwen_inbox.frames("t", "s", "x") != qwen_inbox.frames("t", "s", "x")  # fresh ids


def test_only_a_socket_this_user_owns_is_written_to(listener, tmp_path: Path):
    path, received, _ = listener
    link = tmp_path / "link.sock"
    link.symlink_to(path)
    plain = tmp_path / "plain"
    plain.write_text("")
    for env in (_env(link), _env(plain), {qwen_inbox.SOCKET_ENV: str(path)}, {}):
        assert qwen_inbox.inbox(env) is None and not qwen_inbox.send(env, "s", "hi"), env
    if os.getuid() != 0:
        pytest.skip("only root can give the socket to another user")
    os.chown(path, 65534, 65534)
    assert qwen_inbox.inbox(_env(path)) is None and not qwen_inbox.send(_env(path), "s", "hi")
    assert received == []


def test_without_an_inbox_a_qwen_wait_is_not_held(home: Path, repo: Path):
    """No inbox (messaging off, or a process Qwen did not start): nothing to wake through; it
    exits 0 at once, without asking the relay."""
    payload = json.dumps({"session_id": "qw", "cwd": str(repo)}).encode()
    env = {**os.environ, "COLONY_TASKS_HOME": str(home)}
    for name in (qwen_inbox.SOCKET_ENV, qwen_inbox.TOKEN_ENV):
        env.pop(name, None)
    started = time.monotonic()
    done = subprocess.run(
        [str(EXE), "hook", "wait", "--agent", "qwen"],
        input=payload,
        capture_output=True,
        env=env,
        timeout=20,
    )
    assert (done.returncode, done.stderr) == (0, b"")
    assert time.monotonic() - started < 10
    from colony_tasks.relay import wire

    assert not (home / f"relay-{wire.LOCAL_KEY}.sock").exists()


def test_headless_qwen_is_not_waited_for_its_interactive_ui_is():
    """``qwen -p`` / ``--prompt`` exits as its turn ends; ``qwen -i`` idles."""
    from colony_tasks.base.procs import command_line
    from colony_tasks.hooks import wait as wait_hook

    script = "import time; time.sleep(30)"
    for args, wakeable in (
        (["-p", "hi"], False),
        (["--prompt", "hi"], False),
        (["-i", "hi"], True),
    ):
        agent = subprocess.Popen([sys.executable, "-c", script, *args])
        try:
            deadline = time.monotonic() + 10
            while script not in (command_line(agent.pid) or []):
                assert time.monotonic() < deadline
                time.sleep(0.01)
            assert wait_hook.wakeable(agent.pid, "qwen") is wakeable, args
        finally:
            agent.kill()
            agent.wait()
