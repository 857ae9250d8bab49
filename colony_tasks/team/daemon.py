"""The relay: one long-lived process per user and team store, holding the PostgreSQL connection.

Started on demand by the first hook that finds no relay (``python -m
colony_tasks.team.daemon``, detached, its own session). It holds an exclusive lock on
``relay-<key>.lock`` (a second relay exits at once), writes ``relay-<key>.pid``, listens on a
0600 unix socket (only its own uid may talk to it), and exits after
:data:`IDLE_EXIT` seconds without requests once its outbox is empty.

One worker thread applies the outbox in order. Each event runs the same core use case a
SQLite-mode hook runs, inside one transaction together with its idempotency key: a relay
killed at any point never applies an event twice and never loses one. When the server is away
it backs off (0.2 s doubling to 10 s) and answers hooks at once; each session is told once
that the team store is unreachable and once that it is back.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import struct
import threading
import time

from .. import backend, events, paths
from ..errors import ColonyError
from ..hooks.handlers import HANDLERS
from ..redact import redact
from ..store.pg import PgStore, is_connection_error
from .client import lock_path, pid_path, socket_path
from .outbox import Outbox, outbox_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

IDLE_EXIT = float(os.environ.get("COLONY_TASKS_RELAY_IDLE", "600"))
SERVE_WAIT = 5.0
#: An event in flight for longer than this means the server is slow or hung: hooks waiting on
#: the relay get an empty answer at once (their events stay spooled and are applied later).
SLOW_EVENT = 0.2
#: The same for connecting (TLS and authentication take longer than an event).
SLOW_CONNECT = 1.0
CONNECT_TIMEOUT = 2.0
BACKOFF_FIRST, BACKOFF_MAX = 0.2, 10.0
KEEP_KEYS = 7 * 24 * 3600
CONTEXT_EVENTS = frozenset({"session-start", "user-prompt-submit", "pre-tool-use", "post-tool-use"})

DOWN_NOTICE = (
    "colony-tasks: the team store is unreachable. Your activity is saved on this machine and"
    " delivered when it is back; thread updates and claim warnings pause until then."
)
BACK_NOTICE = (
    "colony-tasks: the team store is reachable again; the activity saved meanwhile has been"
    " delivered."
)


class Relay:
    def __init__(self, url: str) -> None:
        self.url = url
        self.key = backend.store_key(url)
        self.outbox = Outbox(outbox_path(self.key))
        self.store: PgStore | None = None
        self.cond = threading.Condition()
        self.results: dict[int, tuple[float, dict[str, Any]]] = {}
        self.wake = False
        self.stopping = False
        self.down = False
        self.retry_at = 0.0
        self.backoff = BACKOFF_FIRST
        self.last_request = time.monotonic()
        self.busy_since: float | None = None
        self.busy_limit = SLOW_EVENT

    # -- the worker: the outbox, in order --------------------------------------------------

    def work(self) -> None:
        while not self.stopping:
            with self.cond:
                self.cond.wait_for(lambda: self.wake or self.stopping, timeout=self._nap())
                self.wake = False
            try:
                self.flush()
            except Exception as error:  # noqa: BLE001 - the relay must outlive any one event
                paths.log(f"relay: flush failed: {redact(backend.redact_url(repr(error)))}")

    def _nap(self) -> float:
        if self.down:
            return max(self.retry_at - time.monotonic(), 0.01)
        return 1.0

    def flush(self) -> None:
        while not self.stopping:
            rows = self.outbox.pending(100)
            if not rows or not self._connect():
                return
            for row in rows:
                if not self._apply(row):
                    return

    def _connect(self) -> bool:
        if self.store is not None:
            return True
        if time.monotonic() < self.retry_at:
            return False
        self.busy_since, self.busy_limit = time.monotonic(), SLOW_CONNECT  # a hung connect too
        try:
            self.store = PgStore(self.url, timeout=CONNECT_TIMEOUT)
            self.store.prune_event_keys(time.time() - KEEP_KEYS)
        except Exception as error:  # noqa: BLE001
            self._went_down(error)
            return False
        finally:
            self.busy_since, self.busy_limit = None, SLOW_EVENT
        if self.down:
            paths.log(f"relay: team store {backend.redact_url(self.url)} is reachable again")
        self.down = False
        self.backoff = BACKOFF_FIRST
        return True

    def _went_down(self, error: BaseException) -> None:
        if not self.down:
            paths.log(
                f"relay: team store unreachable ({type(error).__name__}:"
                f" {backend.redact_url(str(error))[:300]}); spooling locally"
            )
        if self.store is not None:
            self.store.close()
            self.store = None
        with self.cond:
            self.down = True
            self.retry_at = time.monotonic() + self.backoff
            self.backoff = min(self.backoff * 2, BACKOFF_MAX)
            self.cond.notify_all()

    def _apply(self, row: Any) -> bool:
        """Apply one spooled event exactly once; False when the server went away."""
        store = self.store
        assert store is not None
        handler = HANDLERS.get(row["event"])
        reply: dict[str, Any] = {}
        try:
            if handler is not None:
                payload = json.loads(row["payload"])
                self.busy_since = time.monotonic()
                with store.transaction():
                    # The same hook installed twice spools one event twice: the first acts.
                    first = events.first_time(store, row["event"], row["payload"].encode())
                    if store.claim_event_key(row["key"]) and first:
                        result = handler(store, payload, row["agent"], row["agent_pid"])
                        reply = {"context": result.context, "deny": result.deny}
        except ColonyError as refused:
            # The core refused the event (e.g. a hook of another process for a session it does
            # not own): final, as a SQLite-mode hook logs it and carries on.
            self.busy_since = None
            paths.log(f"relay: event {row['event']} #{row['id']} refused: {redact(str(refused))}")
            self.outbox.done(row["id"])
            self._answer(row["id"], {})
            return True
        except Exception as error:  # noqa: BLE001
            self.busy_since = None
            if is_connection_error(error):
                self._went_down(error)
                return False
            message = redact(backend.redact_url(f"{type(error).__name__}: {error}"))
            stuck = self.outbox.failed(row["id"], message)
            paths.log(f"relay: event {row['event']} #{row['id']} failed: {message}")
            if stuck:
                self._answer(row["id"], {})
            return True
        self.busy_since = None
        self.outbox.done(row["id"])
        self._answer(row["id"], reply)
        return True

    def _answer(self, row_id: int, reply: dict[str, Any]) -> None:
        now = time.monotonic()
        with self.cond:
            self.results[row_id] = (now, reply)
            for stale in [k for k, (at, _) in self.results.items() if now - at > 60]:
                del self.results[stale]
            self.cond.notify_all()

    # -- the socket: one request per connection --------------------------------------------

    def serve(self, conn: socket.socket) -> None:
        try:
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            if struct.unpack("3i", creds)[1] != os.getuid():
                return
            conn.settimeout(SERVE_WAIT)
            data = b""
            while not data.endswith(b"\n"):
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            request = json.loads(data)
            reply = self.reply_for(
                int(request["id"]), str(request.get("event", "")), str(request.get("session", ""))
            )
            conn.sendall(json.dumps(reply).encode() + b"\n")
        except (OSError, ValueError, KeyError, TypeError):
            pass
        finally:
            conn.close()

    def reply_for(self, row_id: int, event: str, session: str) -> dict[str, Any]:
        """The rendered result of the hook's event once applied; while the server is away, the
        one-time notice (or nothing). A session told it was away hears once that it is back,
        in the first result it actually receives."""
        with self.cond:
            self.last_request = time.monotonic()
            self.wake = True
            self.cond.notify_all()
            deadline = time.monotonic() + SERVE_WAIT
            while row_id not in self.results and not self.down and not self.stopping:
                now = time.monotonic()
                busy = self.busy_since
                if now >= deadline or (busy is not None and now - busy > self.busy_limit):
                    break
                self.cond.wait(0.02)
            found = self.results.pop(row_id, None)
        speaks = event in CONTEXT_EVENTS and bool(session)
        if found is not None:
            reply = found[1]
            if speaks and self.outbox.clear_told_down(session):
                reply["context"] = "\n\n".join(p for p in (BACK_NOTICE, reply.get("context")) if p)
            return reply
        if self.down and speaks and not self.outbox.told_down(session):
            self.outbox.mark_told_down(session)
            return {"context": DOWN_NOTICE}
        return {}

    def idle(self) -> bool:
        return (
            time.monotonic() - self.last_request > IDLE_EXIT and not self.outbox.counts()["pending"]
        )

    def stop(self, *_: Any) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()


def main() -> int:
    url = backend.store_url()
    if not url:
        return 0
    key = backend.store_key(url)
    paths.ensure_home()
    lock_fd = os.open(lock_path(key), os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another relay serves this store
    sock_file = socket_path(key)
    with open(pid_path(key), "w", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()}\n")
    os.chmod(pid_path(key), 0o600)
    relay = Relay(url)
    signal.signal(signal.SIGTERM, relay.stop)
    signal.signal(signal.SIGINT, relay.stop)
    if os.path.exists(sock_file):
        os.unlink(sock_file)  # a dead relay's: we hold the lock, nobody else listens
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        server.bind(sock_file)
    finally:
        os.umask(old_umask)
    server.listen(128)
    server.settimeout(1.0)
    worker = threading.Thread(target=relay.work, name="relay-worker", daemon=True)
    worker.start()
    paths.log(f"relay {os.getpid()} serving {backend.redact_url(url)}")
    try:
        while not relay.stopping:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                if relay.idle():
                    break
                continue
            except OSError:
                continue
            threading.Thread(target=relay.serve, args=(conn,), daemon=True).start()
    finally:
        relay.stop()
        server.close()
        for path in (sock_file, pid_path(key)):
            try:
                os.unlink(path)
            except OSError:
                pass
        worker.join(5)
        if relay.store is not None:
            relay.store.close()
        paths.log(f"relay {os.getpid()} exited")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
