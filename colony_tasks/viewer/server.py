"""Serving the viewer with uvicorn on a socket bound up front (so port 0 and errors are clear)."""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
import webbrowser
from collections.abc import Callable

import uvicorn
from starlette.applications import Starlette

from .security import LOOPBACK_HOSTS


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (``port`` 0 picks a free one)."""
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_for(sock: socket.socket, token: str | None = None) -> str:
    """The address to open; a wildcard bind (0.0.0.0, ::) is opened via loopback. With a
    token, every page lives under ``/<token>/`` (see :mod:`.security`)."""
    host, port = sock.getsockname()[:2]
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1" if host == "0.0.0.0" else "::1"
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"{token}/" if token else "")


def allowed_hosts(host: str) -> list[str] | None:
    """Host names a request may use: loopback names on loopback, anything otherwise."""
    if not is_loopback(host):
        return None
    return sorted({*LOOPBACK_HOSTS, host.strip("[]").lower()})


def warn_if_exposed(host: str, write: Callable[[str], None] | None = None) -> bool:
    """Print a loud warning to stderr when bound beyond loopback; True when it warned."""
    if is_loopback(host):
        return False
    say = write or (lambda text: print(text, file=sys.stderr, flush=True))
    say(
        "\n"
        "!!! WARNING: colony-tasks viewer is listening on "
        f"{host}, not on loopback.\n"
        "!!! Every request, reads included, needs the token in the printed URL, but that\n"
        "!!! URL travels in clear text (plain HTTP): anyone who sees it can read every\n"
        "!!! agent's messages, claims and prompts, and post as you.\n"
        "!!! Use --host 127.0.0.1 unless you really mean it.\n"
    )
    return True


def server_for(app: Starlette, *, log_level: str = "warning") -> uvicorn.Server:
    config = uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="off")
    return uvicorn.Server(config)


def serve(app: Starlette, sock: socket.socket, url: str, *, open_browser: bool = False) -> None:
    """Run until interrupted; opens ``url`` in the default browser once listening."""
    server = server_for(app)
    if open_browser:

        def opener() -> None:
            while not server.started and not server.should_exit:
                threading.Event().wait(0.05)
            if server.started:
                webbrowser.open(url)

        threading.Thread(target=opener, daemon=True).start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises Ctrl+C after a clean shutdown
        pass


def start_in_thread(app: Starlette, sock: socket.socket) -> tuple[uvicorn.Server, threading.Thread]:
    """Serve in a background thread (tests); stop with ``server.should_exit = True``."""
    server = server_for(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    return server, thread
