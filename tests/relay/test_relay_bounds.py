"""Attacks on the relay's resources by any process of its user (issue 37), at test sizes:
slow clients past the connection cap, partial big requests, requests claiming another
version, an event naming 100,000 files, more wake waits than an agent has sessions.

The relay is the real resident process a hook starts; the attacker is this test's process.
(Figures at the finding's sizes, before and after: bench/relay_dos.py.)
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from colony_tasks.domain import sessions
from colony_tasks.hooks.payload import request as hook_request
from colony_tasks.hooks.transport import RELAY_WAIT
from colony_tasks.relay import bounds, wire
from colony_tasks.relay.apply import apply
from colony_tasks.relay.waits import MAX_WAITS_PER_AGENT, Waits
from colony_tasks.store import open_local
from tests.relay.test_relay import log_lines, prompts
from tests.support.helpers import wait_held
from tests.support.hookrun import claude, relay_status, run_hook
from tests.support.standin import StandIn


def connect() -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(wire.socket_path(wire.LOCAL_KEY))
    return sock


def closed_by_relay(sock: socket.socket) -> bool:
    """Whether the relay has closed this connection (without waiting for it to)."""
    try:
        return sock.recv(1, socket.MSG_DONTWAIT | socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def threads_of(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("Threads:"))


def as_agent(event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The wire record a hook of this process's sessions sends (their agent is this process:
    their SessionStart hooks were its children)."""
    record = hook_request(event, "claude", payload, json.dumps(payload).encode()).to_wire()
    return {**record, "pid": os.getpid()}


@pytest.fixture
def relay(home: Path, repo: Path) -> Iterator[int]:
    """A relay serving session ``s`` (agent: this process); its pid."""
    assert run_hook("session-start", claude("session-start", "s", repo), home).returncode == 0
    yield int(relay_status(home)["pid"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads counted in /proc")
def test_slow_clients_past_the_cap_are_closed_at_once_and_hold_no_thread(
    relay: int, home: Path, repo: Path
):
    extra = 40
    slow = []
    for _ in range(bounds.MAX_CONNECTIONS + extra):
        sock = connect()
        sock.sendall(b"{")  # and nothing more
        slow.append(sock)
    deadline = time.monotonic() + 5
    while sum(map(closed_by_relay, slow)) < extra and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sum(map(closed_by_relay, slow)) >= extra  # turned away, unread
    assert threads_of(relay) <= bounds.MAX_CONNECTIONS + 4
    hook = run_hook("user-prompt-submit", claude("user-prompt-submit", "s", repo, prompt="p"), home)
    assert hook.returncode == 0 and prompts(home) == ["p"]  # served (or applied itself)
    for sock in slow:
        sock.close()
    assert relay_status(home)["turned_away"] >= extra


def test_a_client_trickling_its_request_is_closed_at_the_read_deadline(relay: int):
    """One byte every 0.2 s never trips a wait between bytes; the whole request has
    :data:`bounds.READ_WAIT` seconds."""
    sock = connect()
    started = time.monotonic()
    with pytest.raises(OSError):
        while time.monotonic() - started < 4 * bounds.READ_WAIT:
            sock.sendall(b" ")
            time.sleep(0.2)
            if closed_by_relay(sock):
                raise ConnectionResetError("closed by the relay")
    sock.close()


def test_partial_big_requests_hold_at_most_the_byte_cap_each(relay: int, home: Path, repo: Path):
    clients = bounds.MAX_CONNECTIONS + 18
    each = 4 * 1024 * 1024  # what the relay of issue 37 would take from every one of them
    taken = [0] * clients
    probe = connect()
    slack = 2 * probe.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)  # queued in the kernel
    probe.close()
    socks: list[socket.socket] = []

    def push(i: int) -> None:
        chunk = b"x" * (1 << 16)
        sock = connect()
        socks.append(sock)
        sock.settimeout(2 * bounds.READ_WAIT)  # the relay stopped reading: it holds the rest
        try:
            while taken[i] < each:
                taken[i] += sock.send(chunk)
        except OSError:
            pass

    pushers = [threading.Thread(target=push, args=(i,)) for i in range(clients)]
    for t in pushers:
        t.start()
    for t in pushers:
        t.join()
    for sock in socks:
        sock.close()
    assert sum(taken) <= bounds.MAX_CONNECTIONS * (bounds.MAX_REQUEST + slack) + clients * slack
    hook = run_hook("user-prompt-submit", claude("user-prompt-submit", "s", repo, prompt="p"), home)
    assert hook.returncode == 0 and prompts(home) == ["p"]


def test_a_request_just_under_the_cap_is_served(relay: int, home: Path, repo: Path):
    """The largest event the relay takes: a prompt of 1,000,000 bytes less its wrapping."""
    record = as_agent("user-prompt-submit", claude("user-prompt-submit", "s", repo, prompt=""))
    wrapping = len(json.dumps({**record, "v": wire.VERSION}).encode()) + 1
    big = "x" * (bounds.MAX_REQUEST - wrapping)
    record["fields"]["prompt"] = big
    reply = wire.ask(wire.socket_path(wire.LOCAL_KEY), record, 10.0)
    assert reply is not None and "error" not in reply
    assert len(prompts(home)) == 1  # kept (cut to the text limit by the core)
    record["fields"]["prompt"] = big + "x"  # one byte more: closed unread, no answer
    assert wire.ask(wire.socket_path(wire.LOCAL_KEY), record, 10.0) is None


def raw(request: dict[str, Any]) -> dict[str, Any]:
    """A request sent as is (``wire.ask`` stamps this client's own version)."""
    sock = connect()
    try:
        sock.settimeout(10)
        sock.sendall(json.dumps(request).encode() + b"\n")
        return dict(json.loads(sock.makefile("rb").readline()))
    finally:
        sock.close()


def test_a_client_claiming_another_version_neither_retires_the_relay_nor_ends_waits(
    home: Path, repo: Path
):
    victim = StandIn(home, repo, "victim", wait=True)
    try:
        wait_held(victim.sid)
        pid = relay_status(home)["pid"]
        for i in range(20):
            forged = {"op": "event", "event": "stop", "session": victim.sid, "v": f"9.{i}"}
            assert raw(forged) == {"retire": True}  # its client handles its event itself
        status = relay_status(home)
        assert status["pid"] == pid and status["waits"] == 1
        assert not victim.wait_done()
        assert not any("retires" in line for line in log_lines(home, "relay.log"))
    finally:
        victim.stop()


def test_the_version_a_relay_compares_is_read_from_its_package_on_disk():
    assert bounds.installed_version() == wire.VERSION


def short_names(count: int) -> list[str]:
    """``count`` distinct file names of a few characters (100,000 fit in one request)."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    names = []
    for i in range(count):
        name = ""
        while True:
            i, d = divmod(i, 36)
            name = digits[d] + name
            if not i:
                break
        names.append(name)
    return names


def test_an_event_naming_100000_files_is_applied_with_the_first_and_a_bystander_is_answered(
    relay: int, home: Path, repo: Path
):
    assert run_hook("session-start", claude("session-start", "b", repo), home).returncode == 0
    write = claude("post-tool-use", "s", repo, tool_name="Write", tool_input={"file_path": "x"})
    many = as_agent("post-tool-use", write)
    many["tool"]["paths"] = short_names(100_000)
    path = wire.socket_path(wire.LOCAL_KEY)
    replies: list[dict[str, Any] | None] = []
    attacker = threading.Thread(target=lambda: replies.append(wire.ask(path, many, 60.0)))
    attacker.start()
    time.sleep(0.05)
    bystander = as_agent("user-prompt-submit", claude("user-prompt-submit", "b", repo, prompt="b"))
    assert wire.ask(path, bystander, RELAY_WAIT) is not None  # no fallback: answered in time
    attacker.join()
    (reply,) = replies
    assert reply is not None and "names 100,000 files" in str(reply["context"])
    store = open_local()
    try:
        (count,) = store.conn.execute("SELECT COUNT(*) FROM observation_paths").fetchone()
        edits = store.conn.execute("SELECT COUNT(*) FROM observations WHERE kind = 'edit'")
        assert count == bounds.MAX_PATHS and edits.fetchone()[0] == 1  # the edit itself kept
    finally:
        store.close()


def test_a_tool_call_within_the_path_cap_is_applied_whole_and_says_nothing_of_a_cut(
    home: Path, repo: Path
):
    store = open_local()
    try:
        sessions.register(store, "s", agent="claude", cwd=str(repo), agent_pid=os.getpid())
        write = claude("post-tool-use", "s", repo, tool_name="Write", tool_input={"file_path": "x"})
        record = as_agent("post-tool-use", write)
        record["tool"]["paths"] = short_names(bounds.MAX_PATHS)
        reply = apply(store, record)
        (count,) = store.conn.execute("SELECT COUNT(*) FROM observation_paths").fetchone()
    finally:
        store.close()
    assert count == bounds.MAX_PATHS and "files; only the first" not in str(reply["context"])


def test_an_agent_holds_at_most_its_share_of_waits_and_a_sessions_new_wait_replaces_its_old(
    home: Path, repo: Path
):
    store = open_local()
    ids = [f"w{i}" for i in range(MAX_WAITS_PER_AGENT + 1)]
    for sid in ids:
        sessions.register(store, sid, agent="claude", cwd=str(repo), agent_pid=os.getpid())
    waits = Waits(lambda: store)
    replies: dict[str, list[dict[str, Any]]] = {sid: [] for sid in ids}

    def hold(sid: str) -> threading.Thread:
        def run() -> None:
            replies[sid].append(waits.hold({"session": sid, "for": 30}, None, agent=os.getpid()))

        thread = threading.Thread(target=run)
        thread.start()
        return thread

    try:
        held = [hold(sid) for sid in ids[:-1]]
        deadline = time.monotonic() + 10
        while len(waits.waiters) < MAX_WAITS_PER_AGENT and time.monotonic() < deadline:
            time.sleep(0.01)
        hold(ids[-1]).join(10)
        assert replies[ids[-1]] == [{"done": "too many waits"}]
        again = hold(ids[0])  # the same session's next Stop: it replaces its old wait
        held[0].join(10)
        assert replies[ids[0]] == [{"done": "superseded"}]
        held[0] = again
    finally:
        waits.close({"done": "relay stopped"})
        for thread in held:
            thread.join(10)
        store.close()
    assert all(r[-1] == {"done": "relay stopped"} for sid, r in replies.items() if sid != ids[-1])
