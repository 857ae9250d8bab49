"""What ``doctor`` and ``colony-tasks relay`` report about the relay (both modes) and team
mode's outbox. ``url`` is the team store's, or None for this user's SQLite store. Never prints
a password (every URL goes through :func:`backend.redact_url`)."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from ..base import backend, paths
from . import wire
from .outbox import Outbox, outbox_path
from .wire import pid_path, socket_path

STUCK_AGE = 15 * 60


def relay_pid(url: str | None) -> int | None:
    """The running relay's pid, or None (a pid file whose process is gone counts as none)."""
    try:
        with open(pid_path(wire.relay_key(url)), encoding="utf-8") as handle:
            pid = int(handle.read().strip() or 0)
    except (OSError, ValueError):
        return None
    if pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return pid


def status(url: str | None) -> dict[str, Any]:
    """The relay (pid, socket, and what it says of itself when it answers) and, in team mode,
    the outbox. A URL no store could use is refused first (Misconfigured), before an outbox
    file is made for it."""
    if url:
        backend.check_url(url)
    key = wire.relay_key(url)
    pid = relay_pid(url)
    said: dict[str, Any] = {}
    if pid is not None:
        try:
            said = wire.ask(socket_path(key), {"op": "ping"}, 2.0) or {}
        except wire.NoRelay:
            said = {}
    found: dict[str, Any] = {
        "store": backend.redact_url(url) if url else paths.db_path(),
        "relay_pid": pid,
        "socket": socket_path(key),
        "relay_version": said.get("version"),
        "events_served": said.get("served"),
        "wake_waits": said.get("waits"),
        "relay_rss_kb": said.get("rss_kb"),
    }
    if url:
        box = Outbox(outbox_path(key))
        try:
            counts = box.counts()
            stuck = box.stuck()
        finally:
            box.close()
        oldest = counts["oldest"]
        found.update(
            outbox=outbox_path(key),
            pending=counts["pending"],
            stuck=counts["stuck"],
            oldest_pending_age=round(time.time() - oldest, 1) if oldest else None,
            stuck_items=stuck,
        )
    return found


def relay_detail(info: dict[str, Any]) -> str:
    pid = info["relay_pid"]
    if not pid:
        return "not running (hooks start it on the next agent event)"
    version = info.get("relay_version")
    detail = f"pid {pid}, socket {info['socket']}"
    if version and version != wire.VERSION:
        detail += (
            f", version {version} (this install is {wire.VERSION}: it retires at the next hook)"
        )
    elif info.get("events_served") is not None:
        detail += f", {info['events_served']} events served"
        if info.get("wake_waits"):
            detail += f", {info['wake_waits']} idle sessions waiting to be woken"
    return detail


def checks(url: str | None) -> list[dict[str, Any]]:
    """Doctor's checks: the relay; in team mode the outbox (pending for long, or stuck)."""
    info = status(url)
    found = [{"check": "relay", "ok": True, "detail": relay_detail(info), "fixable": False}]
    if not url:
        return found
    age = info["oldest_pending_age"]
    late = age is not None and age > STUCK_AGE
    found.append(
        {
            "check": "outbox",
            "ok": not late and not info["stuck"],
            "detail": f"{info['pending']} pending"
            + (f" (oldest {age:.0f}s: is the team store reachable?)" if late else "")
            + f", {info['stuck']} stuck"
            + "".join(
                f"; #{s['id']} {s['event']} ({s['attempts']} attempts): {s['last_error']}"
                for s in info["stuck_items"][:3]
            ),
            "fixable": False,
        }
    )
    return found


def stop(url: str | None, timeout: float = 5.0) -> bool:
    """Ask the relay to exit (SIGTERM) and wait for it; True when none runs afterwards."""
    pid = relay_pid(url)
    if pid is None:
        return True
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if relay_pid(url) is None:
            return True
        time.sleep(0.02)
    return relay_pid(url) is None
