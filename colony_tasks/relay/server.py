"""The resident relay: one process per user and store, serving every hook.

Started on demand by the first hook that finds none (``python -m colony_tasks.relay``,
detached, its own session). It holds an exclusive lock on ``relay-<key>.lock`` (a second relay
exits at once), writes ``relay-<key>.pid``, removes a dead relay's socket, listens on a 0600
unix socket in a 0700 folder, refuses a peer of another uid, and exits after
:data:`IDLE_EXIT` seconds without requests (in team mode, once its outbox is empty too).

Who sent a request is the kernel's word, not the client's: the relay asks the socket for the
client's pid (:func:`peer_pid`) as it accepts the connection, walks from it to the agent
process the client runs under (:func:`colony_tasks.base.procs.agent_chain`) and judges the
request as that agent's (:func:`vouched`). A session is bound to its agent process at
SessionStart; an event, a wake wait or a "closing" from any other agent's tree is refused or
acts only for the sender's own agent, whatever session id and pid the request carries.

A request of another version than this process's is answered ``{"retire": true}``: its
client handles its event itself. When the package on disk holds another version too (an
upgrade replaced it: :func:`.bounds.installed_version`), the relay also retires: it applies
nothing more, finishes what is in flight and exits, and the next hook starts a relay of the
new version. What any client can make the relay hold (connections, threads, bytes, time) is
bounded: see :mod:`.bounds`.

- **SQLite** (:class:`LocalRelay`): the store stays open; each request is applied at once in
  its connection's thread (the store serialises writers) by :func:`.apply.apply`.
- **Team** (:class:`TeamRelay`): hooks spool their event in the outbox first
  (:mod:`colony_tasks.hooks.spool`); one worker thread applies the outbox in order on the
  PostgreSQL store, each event in one transaction with its idempotency key, and the hook's
  request waits for its row's reply. When the server is away the worker backs off (0.2 s
  doubling to 10 s) and hooks are answered at once; each session is told once that the team
  store is unreachable and once that it is back.

Both answer ``search`` requests from a warm searcher (the vector index stays loaded), so
``colony-tasks search`` does not load the model and every vector per call.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
from typing import Any

from ..base import gitbase, paths, procs
from ..base.errors import ColonyError
from ..base.redact import redact
from ..store import Store, open_local, wal
from ..store.faults import storage_failure
from . import apply as apply_mod
from . import bounds, codex_queue, held, wire
from .waits import Waits

IDLE_EXIT = float(os.environ.get("COLONY_TASKS_RELAY_IDLE", "600"))
#: How long a reply may take to send (and, in team mode, a spooled event to be applied).
SERVE_WAIT = 5.0
#: How often the accept loop ticks (team mode's retries, idle exit) when nothing happens.
TICK = 1.0
#: How often a relay that turns connections away says so in the log.
BUSY_LOG_EVERY = 60.0
PRUNE_EVERY = 3600.0
#: How long an idempotency key is kept: longer than any replay of its event.
KEEP_KEYS = 7 * 24 * 3600
#: Linux's SO_PEERCRED / macOS's LOCAL_PEERCRED (level SOL_LOCAL = 0).
LOCAL_PEERCRED = 0x001
#: macOS's LOCAL_PEERPID (level SOL_LOCAL): the pid of the process that connected.
LOCAL_PEERPID = 0x002


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end of a unix socket, or None where this platform
    gives no way to ask (the 0700 folder and 0600 socket are then the only guard)."""
    if hasattr(socket, "SO_PEERCRED"):
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return int(struct.unpack("3i", creds)[1])
    if sys.platform == "darwin":
        # struct xucred: u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16]
        creds = conn.getsockopt(0, LOCAL_PEERCRED, struct.calcsize("IIh16I"))
        return int(struct.unpack_from("II", creds)[1])
    return None


def peer_pid(conn: socket.socket) -> int | None:
    """The pid of the process that connected at the other end of a unix socket, as the kernel
    recorded it (Linux's SO_PEERCRED, macOS's LOCAL_PEERPID); None where this platform gives
    no way to ask."""
    try:
        if sys.platform.startswith("linux") and hasattr(socket, "SO_PEERCRED"):
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid = struct.unpack("3i", creds)[0]  # struct ucred: pid, uid, gid
        elif sys.platform == "darwin":
            pid = struct.unpack("i", conn.getsockopt(0, LOCAL_PEERPID, struct.calcsize("i")))[0]
        else:
            return None
    except OSError:
        return None
    return pid if pid > 0 else None


def client_chain(conn: socket.socket) -> list[int] | None:
    """The client at the other end of ``conn`` and its ancestors up to its agent process
    (:func:`colony_tasks.base.procs.agent_chain`), or None where the kernel names no peer.
    Read as the connection is accepted, while the client that connected still runs."""
    pid = peer_pid(conn)
    return procs.agent_chain(pid) if pid is not None else None


def vouched(chain: list[int] | None, claimed: object) -> int | None:
    """The agent process a request acts for. A pid the client claims is believed only when it
    lies on the kernel's chain from the client to its agent (the client itself, a shell that
    wraps it, the agent: what an honest client computes); anything else — null, made up,
    another agent's — is replaced by the agent the relay found itself. Where the platform
    names no peer (``chain`` None), the client's word is all there is."""
    pid = claimed if isinstance(claimed, int) and not isinstance(claimed, bool) else None
    if pid is not None and pid <= 1:
        pid = None
    if chain is None or pid in chain:
        return pid
    if pid is not None:
        paths.log(
            f"relay: a client claimed agent process {pid}; the kernel says it is process"
            f" {chain[0]} under agent process {chain[-1]}: judged as {chain[-1]}"
        )
    return chain[-1]


class Relay:
    """What both backends share: the socket, versions, idleness and stopping."""

    backend = "sqlite"

    def __init__(self, key: str) -> None:
        self.key = key
        self.cond = threading.Condition()
        self.stopping = False
        self.retiring = False
        self.in_flight = 0
        self.busy = 0  # connections read or answered now (not held waits): see admit()
        self.turned_away = 0
        self.busy_logged = 0.0
        self.served = 0
        self.searches = 0
        self.work_seconds = 0.0  # time spent applying events (for the benchmarks' budget)
        self.started = time.time()
        self.last_request = time.monotonic()
        self._search_lock = threading.Lock()
        self.listener: socket.socket | None = None
        self.socket_file = ""
        # Written to by stop and retire (a signal handler among them): the accept loop wakes
        # up at once rather than at its next tick. A listening socket's shutdown does not
        # wake a waiting accept on every system.
        self.waker, self.wake_sender = socket.socketpair()
        self.wake_sender.setblocking(False)
        self.waits = Waits(self.wake_store)
        self.git = gitbase.Pool()  # the working trees' cat-file processes, for regions' bases

    # -- the socket: one request per connection --------------------------------------------

    def admit(self) -> bool:
        """Whether a new connection may be served now: False past
        :data:`.bounds.MAX_CONNECTIONS` at once (the accept loop then closes it unread and
        its client handles its event itself)."""
        with self.cond:
            if self.busy < bounds.MAX_CONNECTIONS:
                self.busy += 1
                return True
            self.turned_away += 1
            now = time.monotonic()
            say, self.busy_logged = now - self.busy_logged > BUSY_LOG_EVERY, now
        if say:
            paths.log(
                f"relay {os.getpid()}: {bounds.MAX_CONNECTIONS} connections at once; turning"
                " new ones away (their hooks apply their events themselves)"
            )
        return False

    def _leave(self) -> None:
        with self.cond:
            self.busy -= 1

    def serve(self, conn: socket.socket) -> None:
        """Read and answer one admitted connection (see :meth:`admit`)."""
        busy = True
        with self.cond:
            self.in_flight += 1
        try:
            uid = peer_uid(conn)
            if uid is not None and uid != os.getuid():
                paths.log(f"relay {os.getpid()}: refused a client of uid {uid}")
                return
            chain = client_chain(conn)
            data = bounds.read_request(conn)
            if data is None:
                return
            request = json.loads(data)
            del data
            ours = isinstance(request, dict) and request.get("v") == wire.VERSION
            if ours:  # another version's clients do not keep this relay from idling out
                self.last_request = time.monotonic()
            conn.settimeout(SERVE_WAIT)
            if not isinstance(request, dict):
                reply: dict[str, Any] = {"error": "bad request"}
            elif request.get("op") == "wait" and ours:
                busy = False  # a held wait is bounded by the waits (see .waits), not here
                self._leave()
                reply = self.wait(request, conn, chain)
            else:
                reply = self.answer(request, chain)
            try:
                conn.sendall(json.dumps(reply).encode() + b"\n")
            except OSError:
                if reply.get("ids"):  # a woken client gone: its items go back to pending
                    self.waits.unclaim(reply, str(request.get("session")))
                raise
        except (OSError, ValueError):
            pass
        finally:
            conn.close()
            if busy:
                self._leave()
            with self.cond:
                self.in_flight -= 1
                self.cond.notify_all()

    def answer(self, request: dict[str, Any], chain: list[int] | None) -> dict[str, Any]:
        """The reply to one request; ``chain``: its client's process chain, as the kernel
        tells it (:func:`client_chain`)."""
        op = request.get("op")
        # Asking after a relay (doctor, `colony-tasks relay`) or stopping it is any version's.
        if op == "ping":
            return self.status()
        if op == "stop":
            self.stop()
            return {"stopping": True}
        if request.get("v") != wire.VERSION:
            # The client's word is not enough: only an upgrade on disk retires this relay.
            installed = bounds.installed_version()
            if installed != wire.VERSION:
                self.retire(str(request.get("v")), installed)
            return {"retire": True}
        if self.retiring or self.stopping:
            return {"retire": True}
        if op == "search":
            return self.search(request)
        if op == "nudge":
            self.waits.nudge()
            return {}
        if op == "closing":  # only the sender's own agent: it cannot end another's waits
            pid = vouched(chain, request.get("pid"))
            return {"ended": self.waits.closing(pid) if pid is not None else 0}
        return self.event(request, chain)

    def wait(
        self, request: dict[str, Any], conn: socket.socket, chain: list[int] | None
    ) -> dict[str, Any]:
        """A wake wait (:mod:`.waits`): held until an item wakes the session or the wait ends;
        only for a session bound to the client's own agent process."""
        if self.retiring or self.stopping:
            return {"retire": True}
        conn.settimeout(None)
        return self.waits.hold(request, conn, agent=vouched(chain, request.get("pid")))

    def wake_store(self) -> Store | None:
        """The store the wake waits ask (None: unreachable just now)."""
        raise NotImplementedError

    def event(self, request: dict[str, Any], chain: list[int] | None) -> dict[str, Any]:
        """Apply a hook's event (or, in team mode, answer for its spooled row); ``chain``
        names the client as :meth:`answer` received it. An applied event tells the waits
        (:meth:`.waits.Waits.saw`); a refused one changes nothing."""
        raise NotImplementedError

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "version": wire.VERSION,
            "backend": self.backend,
            "served": self.served,
            "searches": self.searches,
            "waits": len(self.waits.waiters),
            "threads": threading.active_count(),
            "turned_away": self.turned_away,
            "work_seconds": self.work_seconds,
            "started": self.started,
            "rss_kb": _rss_kb(),
            "git_processes": self.git.started(),  # cat-file processes started (regions)
        }

    def search_store(self) -> Store | None:
        raise NotImplementedError

    def search(self, request: dict[str, Any]) -> dict[str, Any]:
        """A search through the warm searcher (see :mod:`colony_tasks.search`)."""
        from .. import search as search_mod
        from ..usecases import actions

        store = self.search_store()
        if store is None:
            return {"error": "the store is unreachable"}
        kinds = request.get("kinds")
        task_id = request.get("task_id")
        semantic = request.get("semantic")
        with self._search_lock:
            searcher = search_mod.searcher_for(store)  # kept warm while the store is open
            hits = actions.search(
                searcher,
                str(request.get("query") or ""),
                limit=int(request.get("limit") or 20),
                task_id=task_id if isinstance(task_id, int) else None,
                kinds=[str(k) for k in kinds] if isinstance(kinds, list) and kinds else None,
                semantic=semantic if isinstance(semantic, bool) else None,
            )
            unavailable = searcher.unavailable
            self.searches += 1
        return {"hits": [h.to_dict() for h in hits], "unavailable": unavailable}

    # -- lifecycle -------------------------------------------------------------------------

    def retire(self, client_version: str, installed: str | None) -> None:
        """Another version is installed (``installed``: its version on disk, None when the
        package is gone), as a client of version ``client_version`` found: apply nothing
        more and exit once idle."""
        if not self.retiring:
            paths.log(
                f"relay {os.getpid()} ({wire.VERSION}) retires: version {installed} is installed"
                f" (a client of version {client_version[:40]} asked)",
                name=paths.RELAY_LOG_NAME,
            )
        with self.cond:
            first = not self.retiring
            self.retiring = True
            self.cond.notify_all()
        self.waits.close({"retire": True})
        if first and self.listener is not None:
            # New clients find no socket (and start a relay of their version); the accept
            # loop wakes up and ends.
            try:
                os.unlink(self.socket_file)
            except OSError:
                pass
            self.wake_accept()

    def stop(self, *_: Any) -> None:
        with self.cond:
            first = not self.stopping
            self.stopping = True
            self.cond.notify_all()
        self.waits.close({"done": "relay stopped"})
        if first:
            self.wake_accept()

    def wake_accept(self) -> None:
        """Wake the accept loop so that it sees ``stopping`` or ``retiring`` now."""
        try:
            self.wake_sender.send(b"!")
        except OSError:
            pass  # already woken (the buffer is full) or closed

    def idle(self) -> bool:
        return self.in_flight == 0 and time.monotonic() - self.last_request > IDLE_EXIT

    def start(self) -> None:
        """Start background work (team mode's outbox worker) once the socket is up."""

    def tick(self) -> None:
        """Called about once a second by the accept loop."""

    def close(self) -> None:
        """Wait (briefly) for the requests in flight, then let go of the store."""
        with self.cond:
            self.cond.wait_for(lambda: self.in_flight == 0, timeout=SERVE_WAIT)


class LocalRelay(Relay):
    """This user's SQLite store, open for the relay's life."""

    def __init__(self) -> None:
        super().__init__(wire.LOCAL_KEY)
        # Before the store's first open replays the WAL: what a damaged log would drop
        # silently is kept aside and recorded for `doctor` (see colony_tasks.store.wal).
        wal.preserve(paths.db_path())
        self.store = open_local()
        self.store.clear_wake_holds()  # a dead relay's: its waiting clients are gone too
        self.last_prune = 0.0
        self.tick()

    def event(self, request: dict[str, Any], chain: list[int] | None) -> dict[str, Any]:
        # The agent process is the kernel's word (see vouched), never what the client put.
        request = {**request, "pid": vouched(chain, request.get("pid"))}
        start = time.perf_counter()
        try:
            if held.waiting() and not held.drain(self.apply_held):
                held.hold(request, "events before it are still held")
                return {"error": "held"}
            reply = apply_mod.apply(self.store, request)
        except ColonyError as refused:
            # The core refused the event (e.g. a hook of another process for a session it does
            # not own): final, logged as a hook applying it itself would log it.
            paths.log(f"relay: {request.get('event')} refused: {redact(str(refused))}")
            return {"error": "refused"}
        except Exception as error:  # noqa: BLE001 - the relay outlives any one event
            cause = storage_failure(error)
            if cause is not None and held.hold(request, cause):
                return {"error": "held"}  # applied once the store takes writes again
            paths.log(f"relay: {request.get('event')} failed: {type(error).__name__}: {error}")
            return {"error": "failed"}
        finally:
            self.work_seconds += time.perf_counter() - start
        self.served += 1
        self.waits.saw(request)
        codex_queue.watch(self.waits, self.store, request)
        return reply

    def apply_held(self, request: dict[str, Any]) -> None:
        apply_mod.apply(self.store, request)
        self.waits.saw(request)

    def search_store(self) -> Store:
        return self.store

    def wake_store(self) -> Store:
        return self.store

    def tick(self) -> None:
        now = time.time()
        if held.waiting():
            try:
                held.drain(self.apply_held)
            except Exception as error:  # noqa: BLE001 - the next tick tries again
                paths.log(f"relay: delivering held events failed: {error}")
        if now - self.last_prune > PRUNE_EVERY:
            self.last_prune = now
            try:
                self.store.prune_event_keys(now - KEEP_KEYS)
            except Exception as error:  # noqa: BLE001
                paths.log(f"relay: pruning event keys failed: {error}")

    def close(self) -> None:
        super().close()
        self.store.close()


def _rss_kb() -> int | None:
    """This process's resident memory (Linux's /proc; None elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def serve(relay: Relay, key: str) -> int:
    """Serve until idle, stopped or retired; the caller holds the relay lock for ``key``
    and chose the relay for its store (see :mod:`colony_tasks.relay.__main__`)."""
    home = paths.home()
    sock_file = wire.socket_path(key)
    if os.path.dirname(sock_file) != home:
        paths.private_dir(os.path.dirname(sock_file))
    signal.signal(signal.SIGTERM, relay.stop)
    signal.signal(signal.SIGINT, relay.stop)
    if os.path.lexists(sock_file):
        os.unlink(sock_file)  # a dead relay's: we hold the lock, nobody else listens
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        server.bind(sock_file)
    finally:
        os.umask(old_umask)
    server.listen(128)
    server.setblocking(False)
    relay.listener, relay.socket_file = server, sock_file
    with open(wire.pid_path(key), "w", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()}\n")
    os.chmod(wire.pid_path(key), 0o600)
    previous = gitbase.install(relay.git)
    relay.start()
    paths.log(
        f"relay {os.getpid()} ({wire.VERSION}) serving {relay.backend} store",
        name=paths.RELAY_LOG_NAME,
    )
    try:
        while not (relay.stopping or relay.retiring):
            ready, _, _ = select.select([server, relay.waker], [], [], TICK)
            if not ready:
                relay.tick()
                if relay.idle():
                    break
                continue
            if server not in ready:
                continue  # woken: the loop's condition says why
            try:
                conn, _ = server.accept()
            except OSError:  # the client left before it was accepted, or the listener is shut
                if relay.retiring:
                    break
                continue
            if not relay.admit():
                conn.close()  # its client handles its event itself, at once
                continue
            threading.Thread(target=relay.serve, args=(conn,), daemon=True).start()
    finally:
        server.close()
        for path in (sock_file, wire.pid_path(key)):
            try:
                os.unlink(path)
            except OSError:
                pass
        relay.stop()
        relay.close()
        relay.git.close()
        relay.waker.close()
        relay.wake_sender.close()
        gitbase.install(previous)
        paths.log(f"relay {os.getpid()} exited", name=paths.RELAY_LOG_NAME)
    return 0
