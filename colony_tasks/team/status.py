"""What ``doctor`` and ``colony-tasks relay`` report about team mode: the relay process and the
outbox. Never prints a password (every URL goes through :func:`backend.redact_url`)."""

from __future__ import annotations

import os
import signal
import time

from .. import backend
from ..relay.wire import pid_path, socket_path
from .outbox import Outbox, outbox_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STUCK_AGE = 15 * 60


def relay_pid(url: str) -> int | None:
    """The running relay's pid, or None (a pid file whose process is gone counts as none)."""
    try:
        with open(pid_path(backend.store_key(url)), encoding="utf-8") as handle:
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


def status(url: str) -> dict[str, Any]:
    key = backend.store_key(url)
    box = Outbox(outbox_path(key))
    try:
        counts = box.counts()
        stuck = box.stuck()
    finally:
        box.close()
    oldest = counts["oldest"]
    return {
        "store": backend.redact_url(url),
        "relay_pid": relay_pid(url),
        "socket": socket_path(key),
        "outbox": outbox_path(key),
        "pending": counts["pending"],
        "stuck": counts["stuck"],
        "oldest_pending_age": round(time.time() - oldest, 1) if oldest else None,
        "stuck_items": stuck,
    }


def checks(url: str) -> list[dict[str, Any]]:
    """Doctor's team-mode checks: the relay, the outbox (pending for long, or stuck)."""
    info = status(url)
    relay = info["relay_pid"]
    age = info["oldest_pending_age"]
    late = age is not None and age > STUCK_AGE
    found = [
        {
            "check": "relay",
            "ok": True,
            "detail": f"pid {relay}, socket {info['socket']}"
            if relay
            else "not running (hooks start it on the next agent event)",
            "fixable": False,
        },
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
        },
    ]
    return found


def stop(url: str, timeout: float = 5.0) -> bool:
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
