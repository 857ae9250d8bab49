"""Codex's shared local app-server (``codex app-server daemon``) in a sandbox, and a client of
it as the TUI attaches: JSON-RPC over WebSocket over the daemon's Unix control socket
(``CODEX_HOME/app-server-control/app-server-control.sock``)."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from .model_server import ResponsesServer
from .sandbox import CODEX_MODEL, Sandbox

SOCKET = Path("app-server-control") / "app-server-control.sock"


def configure(sandbox: Sandbox, server: ResponsesServer) -> None:
    """The scripted provider and the offline settings ``Sandbox.codex`` passes as ``-c``, in
    config.toml (a daemon takes no command-line overrides), after what install wrote."""
    config = sandbox.home / ".codex" / "config.toml"
    url = f"http://127.0.0.1:{server.port}/v1"
    head = (
        f'model = "{CODEX_MODEL}"\nmodel_provider = "scripted"\n'
        'check_for_update_on_startup = false\napproval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n\n'
    )
    tail = (
        f'\n[model_providers.scripted]\nname = "scripted"\nbase_url = "{url}"\n'
        'wire_api = "responses"\n\n[analytics]\nenabled = false\n\n'
        "[features]\nplugins = false\napps = false\nremote_plugin = false\n"
        f'\n[projects."{sandbox.repo}"]\ntrust_level = "trusted"\n'
    )
    text = config.read_text() if config.exists() else ""
    config.write_text(head + text + tail)


class Daemon:
    """``codex app-server daemon start`` … ``stop`` (and its updater, by its pid file)."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.codex_home = sandbox.home / ".codex"

    def __enter__(self) -> Daemon:
        self.sandbox.run(self.sandbox.toolchain.codex, "app-server", "daemon", "start")
        return self

    def __exit__(self, *exc: object) -> None:
        self.sandbox.run(self.sandbox.toolchain.codex, "app-server", "daemon", "stop", check=False)
        updater = self.codex_home / "app-server-daemon" / "daemon-updater.pid"
        try:
            os.kill(int(json.loads(updater.read_text())["pid"]), signal.SIGTERM)
        except (OSError, ValueError, KeyError):
            pass

    def queue(self, thread_id: str, text: str) -> subprocess.CompletedProcess:
        return self.sandbox.run(
            self.sandbox.toolchain.codex, "queue", "--thread", thread_id, "--message", text
        )


class Client:
    """One client connection to the daemon; every message it receives is kept."""

    def __init__(self, daemon: Daemon) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # A socket address holds ~107 bytes: reach it through a descriptor of its folder.
        folder = os.open(daemon.codex_home / SOCKET.parent, os.O_PATH | os.O_DIRECTORY)
        try:
            self.sock.connect(f"/proc/self/fd/{folder}/{SOCKET.name}")
        finally:
            os.close(folder)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += self.sock.recv(4096)
        self.buf = buf.split(b"\r\n\r\n", 1)[1]
        self.lock = threading.Lock()
        self.messages: list[dict[str, Any]] = []
        self.cond = threading.Condition()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _frame(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        with self.lock:
            self.sock.sendall(head + mask + body)

    def _read(self) -> None:
        data = b""
        try:
            while True:
                first, second = self._exact(2)
                opcode, n = first & 0x0F, second & 0x7F
                if n == 126:
                    n = struct.unpack("!H", self._exact(2))[0]
                elif n == 127:
                    n = struct.unpack("!Q", self._exact(8))[0]
                payload = self._exact(n)
                if opcode == 9:
                    self._frame(10, payload)
                    continue
                if opcode == 8:
                    return
                data += payload
                if not first & 0x80:
                    continue
                text, data = data.decode(), b""
                with self.cond:
                    self.messages.append(json.loads(text))
                    self.cond.notify_all()
        except (EOFError, OSError, ValueError):
            return

    def send(self, method: str, params: dict[str, Any] | None = None) -> int:
        self.next_id += 1
        message = {"method": method, "id": self.next_id, "params": params or {}}
        self._frame(1, json.dumps(message).encode())
        return self.next_id

    def notify(self, method: str) -> None:
        self._frame(1, json.dumps({"method": method}).encode())

    def wait(self, accepts, what: str, timeout: float = 90.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.cond:
            while time.monotonic() < deadline:
                for message in self.messages:
                    if accepts(message):
                        return message
                self.cond.wait(0.5)
        raise AssertionError(f"timed out waiting for {what}")

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        rid = self.send(method, params)
        reply = self.wait(lambda m: m.get("id") == rid, f"the reply to {method}")
        assert "error" not in reply, reply
        return reply["result"]

    def initialize(self) -> None:
        self.call(
            "initialize",
            {
                "clientInfo": {"name": "colony_tasks_test", "title": "test", "version": "0"},
                "capabilities": {"experimentalApi": True},
            },
        )
        self.notify("initialized")

    def count(self, method: str) -> int:
        with self.cond:
            return sum(1 for m in self.messages if m.get("method") == method)

    def close(self) -> None:
        try:
            self._frame(8, b"")
            self.sock.close()
        except OSError:
            pass
