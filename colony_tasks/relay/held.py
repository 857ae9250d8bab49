"""Events the local store could not take (disk full, read-only, an I/O error): held, then
delivered once when it can.

Without this, a hook's event that the SQLite store refuses to write is lost with a line in the
fallback log. Here the relay (or a hook applying its own event) puts the request — already
vouched for (its agent process is the kernel's word) and redacted as every spooled event is —
into a small outbox of its own, and every later event, and the relay once every few seconds,
first tries to apply what is held, in order. The outbox lives in the data folder, or in the
private temp folder when the data folder cannot take a write either (a full disk or a
read-only mount is often both). Beside it, a flag file says something waits: a holder creates
it after its row is in, a drainer removes it before it reads (and puts it back if it stops
early), so a row held during a drain is never left without its flag, and a machine with
nothing held pays two ``stat`` calls per event.

Once: an event the core applies exactly once claims its idempotency key in the transaction of
its effects (:mod:`colony_tasks.relay.apply`), so a held row applied by two processes at once,
or again after a crash between its apply and its delete, acts once; the other events are
idempotent (a state, a refresh). Standard library only, as the rest of the hook path.
"""

from __future__ import annotations

import os
import sqlite3
import zlib

from ..base import paths
from ..base.redact import redact
from ..store.faults import storage_failure
from .outbox import Outbox

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

HELD_NAME = "held-local.db"
FLAG = ".waiting"


def places() -> list[str]:
    """Where held events live: the data folder first, then the private temp folder (one file
    per data folder, named by it)."""
    raw = paths.home().encode("utf-8", "surrogateescape")
    spare = f"held-{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}.db"
    return [os.path.join(paths.home(), HELD_NAME), os.path.join(paths.fallback_dir(), spare)]


def waiting() -> bool:
    """Whether anything may be held (a flag exists): two ``stat`` calls."""
    return any(os.path.exists(place + FLAG) for place in places())


def _flag(place: str) -> None:
    try:
        os.close(paths.open_private(place + FLAG, os.O_WRONLY | os.O_CREAT))
    except OSError:
        pass


def hold(request: dict[str, Any], cause: str) -> bool:
    """Keep ``request`` for later; False when no place could take it either (then it is
    lost, and the log says so)."""
    for place in places():
        try:
            if place != places()[0]:
                paths.private_dir(os.path.dirname(place))
            box = Outbox(place)
        except (OSError, sqlite3.Error):
            continue
        try:
            box.put(
                str(request.get("key") or os.urandom(12).hex()),
                str(request.get("event") or ""),
                str(request.get("agent") or ""),
                request,
                session_id=str(request.get("session") or ""),
                agent_pid=request.get("pid") if isinstance(request.get("pid"), int) else None,
            )
        except sqlite3.IntegrityError:
            _flag(place)
            return True  # the same event is held already (a hook that fell back)
        except (OSError, sqlite3.Error):
            continue
        finally:
            box.close()
        _flag(place)
        paths.log(f"store: {request.get('event')} held for later: {redact(cause)}")
        return True
    paths.log(f"store: {request.get('event')} lost: {redact(cause)}; nowhere to hold it")
    return False


def drain(apply: Callable[[dict[str, Any]], object]) -> bool:
    """Apply the held events in order with ``apply``; True when nothing is held any more.
    Stops at the first that still meets a storage failure (the rest wait behind it); one that
    fails otherwise is counted and, after a few attempts, left as stuck for ``doctor``."""
    import json  # only when something is held

    for place in places():
        if not os.path.exists(place + FLAG):
            continue
        try:
            os.unlink(place + FLAG)
        except FileNotFoundError:
            continue  # another process is draining it
        try:
            box = Outbox(place)
        except (OSError, sqlite3.Error):
            _flag(place)
            return False
        try:
            while rows := box.pending():
                for row in rows:
                    try:
                        apply(json.loads(row["payload"]))
                    except Exception as error:  # noqa: BLE001 - each row is judged alone
                        if storage_failure(error):
                            _flag(place)
                            return False
                        box.failed(int(row["id"]), f"{type(error).__name__}: {error}")
                        continue
                    box.done(int(row["id"]))
        finally:
            box.close()
    return True


def counts() -> dict[str, int]:
    """Held and stuck rows in all places, for ``doctor`` and the relay's status."""
    total = {"held": 0, "stuck": 0}
    for place in places():
        if not os.path.exists(place):
            continue
        try:
            box = Outbox(place)
        except (OSError, sqlite3.Error):
            continue
        try:
            found = box.counts()
        finally:
            box.close()
        total["held"] += found["pending"]
        total["stuck"] += found["stuck"]
    return total
