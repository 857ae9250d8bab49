"""The relay's wake waits: idle sessions' background Stop handlers, answered when an item that
wakes them arrives (see :mod:`colony_tasks.domain.wake`).

A ``colony-tasks hook wait`` client sends ``{"op": "wait", "session": ..., "pid": ...}`` and its
connection stays open. The wait is held only when the session is bound to the client's own
agent process, as the kernel names it (the relay passes it in: see
:func:`colony_tasks.relay.server.vouched`); a wait in another session's name is refused and
logged, and the session's own wait goes on. One thread serves every waiter:

- about four times a second it checks that each waiter's agent process is alive and its client
  still connected (a kill of the agent, a killed hook: the wait ends, nothing is claimed);
- it asks the store only when something may have changed: SQLite's ``data_version`` moved
  (another process committed: an MCP server, the CLI, a hook applying its own event), the relay
  applied an event itself (it nudges), or, on PostgreSQL (no such counter), once every
  :data:`POLL_NO_VERSION` seconds — one query for all waiters (:func:`colony_tasks.domain.wake.ready`);
- a session with an item is woken: the items are claimed (:func:`colony_tasks.domain.wake.claim`)
  and the reply ``{"wake": text, "ids": [...]}`` ends its client with exit 2 — unless its wake
  budgets are spent (:func:`colony_tasks.domain.wake.may_wake`): the wait then goes on, and a
  later check (at most :data:`FULL_EVERY` seconds on) wakes it once the minute has passed, if
  its next turn has not delivered the items first;
- the wait ends quietly (``{"done": why}``) when the session ends, resumes on its own (the relay
  applies any of its events but Stop, StopFailure and Notification), its agent shuts down (its
  MCP server, stopping, sends ``{"op": "closing", "pid": <agent pid>}``: Claude Code waits up
  to 30 s for background hooks at exit, and runs SessionEnd only after), a newer wait for the
  same session arrives, the relay stops or retires, or after the client's ``for`` seconds.

A Codex session hosted by its shared app-server has no waiting client: when the relay applies
its Stop it holds a *watch* for it (:meth:`Waits.watch`), answered the same way, by the same
thread, but delivered by a callable (``codex queue``: :mod:`colony_tasks.relay.codex_queue`)
in a thread of its own; the items go back to pending when it fails.

No wait runs any query while nobody waits; the thread exits with the last waiter.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..base import paths
from ..base.models import Observation
from ..domain import wake
from ..render import briefing
from ..store import Store

TICK = 0.25
POLL_NO_VERSION = 1.0
FULL_EVERY = 30.0
#: How long closing waits for the checking thread to finish its query (a store wait is 5 s).
CLOSE_WAIT = 6.0
LONGEST = 7 * 24 * 3600.0
#: How long an agent that said it is shutting down gets no new wait (its last Stop's).
CLOSING_MEMORY = 120.0
#: At most this many waits are held at once (one thread each), and this many per agent
#: process (a session has one; a new wait for it replaces the old): past either, a new wait
#: ends at once (``{"done": "too many waits"}``).
MAX_WAITS = 128
MAX_WAITS_PER_AGENT = 8
#: Events of a session that do not mean it resumed work.
IDLE_EVENTS = frozenset({"stop", "stop-failure", "notification"})


#: A watch's delivery: the claimed items of its session; whether they reached it.
Deliver = Callable[[Sequence[Observation]], bool]


class Waiter:
    def __init__(
        self,
        session: str,
        pid: int | None,
        conn: socket.socket | None,
        deliver: Deliver | None = None,
    ) -> None:
        self.session = session
        self.pid = pid
        self.conn = conn
        self.deliver = deliver
        self.done = threading.Event()
        self.reply: dict[str, Any] = {"done": "timeout"}

    def finish(self, reply: dict[str, Any]) -> bool:
        if self.done.is_set():
            return False
        self.reply = reply
        self.done.set()
        return True

    def alive(self) -> bool:
        """Its agent process runs and its client is still connected."""
        if self.pid is not None and not _pid_alive(self.pid):
            return False
        if self.conn is None:
            return True
        try:
            return self.conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
        except BlockingIOError:
            return True
        except OSError:
            return False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Waits:
    """Every wake wait of one relay; ``store`` gives the store to ask (None: unreachable)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.lock = threading.Condition()
        self.waiters: dict[str, Waiter] = {}
        self.nudged = False
        self.closed = False
        self.thread: threading.Thread | None = None
        self.queries = 0  # store queries made for waiters (for the benchmark)
        self.closing_pids: dict[int, float] = {}  # agent pid → until when it is closing

    # -- the waiting client's thread ---------------------------------------------------------

    def hold(
        self, request: dict[str, Any], conn: socket.socket | None, *, agent: int | None
    ) -> dict[str, Any]:
        """Hold one wait until it is answered (the serving thread of its connection).
        ``agent``: the client's agent process, as the relay established it (not the
        request's word); the session must be bound to it."""
        session = request.get("session")
        pid = agent
        seconds = request.get("for")
        limit = float(seconds) if isinstance(seconds, int | float) and seconds > 0 else LONGEST
        if not isinstance(session, str) or not session:
            return {"done": "no session"}
        store = self._store()
        if store is None:
            return {"done": "store unreachable"}
        known = store.get_session(session)
        if known is None or known.ended_at is not None:
            return {"done": "ended" if known else "unknown session"}
        if pid is None or known.agent_pid != pid:
            paths.log(
                f"relay: a wait for {known.handle} refused: it belongs to agent process"
                f" {known.agent_pid}, the wait comes from agent process {pid}"
            )
            return {"done": "not its agent"}
        if not wake.enabled(store, known):
            return {"done": "off"}
        waiter = Waiter(session, pid, conn)
        with self.lock:
            if self.closed:
                return {"retire": True}
            if pid is not None and self.closing_pids.get(pid, 0.0) > time.monotonic():
                return {"done": "agent closing"}
            if not self._enter(session, pid, waiter):
                return {"done": "too many waits"}
        self._held(store, session, True)
        try:
            if not waiter.done.wait(limit):
                waiter.finish({"done": "timeout"})
        finally:
            with self.lock:
                last = self.waiters.get(session) is waiter
                if last:
                    del self.waiters[session]
            if last:
                self._held(store, session, False)
        return waiter.reply

    def watch(self, store: Store, session: str, pid: int, deliver: Deliver) -> bool:
        """Hold a watch for an idle session that no client waits for (Codex): ``deliver``
        takes its items when one wakes it. It ends as a wait does (the session resumes or
        ends, its agent exits), or when it has delivered. Whether it is held."""
        waiter = Waiter(session, pid, None, deliver)
        with self.lock:
            if self.closed:
                return False
            if not self._enter(session, pid, waiter):
                return False
        self._held(store, session, True)
        return True

    def _enter(self, session: str, pid: int, waiter: Waiter) -> bool:
        """Put ``waiter`` in the table (the lock held): it supersedes the session's old one; a
        new session is refused past the agent's share. Starts the checking thread."""
        old = self.waiters.get(session)
        if old is None and self._full(pid):
            return False
        if old is not None:
            old.finish({"done": "superseded"})
        self.waiters[session] = waiter
        self.nudged = True
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="relay-waits", daemon=True)
            self.thread.start()
        self.lock.notify_all()
        return True

    def _forget(self, store: Store, waiters: list[Waiter]) -> None:
        """Drop the watches that ended (a wait's own thread drops a wait)."""
        for waiter in waiters:
            if waiter.deliver is None or not waiter.done.is_set():
                continue
            with self.lock:
                last = self.waiters.get(waiter.session) is waiter
                if last:
                    del self.waiters[waiter.session]
            if last:
                self._held(store, waiter.session, False)

    def _full(self, agent: int) -> bool:
        """Whether no new wait may be held (the lock held): too many in all, or of ``agent``."""
        if len(self.waiters) >= MAX_WAITS:
            return True
        return sum(w.pid == agent for w in self.waiters.values()) >= MAX_WAITS_PER_AGENT

    def _held(self, store: Store, session: str, held: bool) -> None:
        try:
            wake.hold(store, session, held)
        except Exception as error:  # noqa: BLE001 - a wait never fails its relay
            paths.log(f"relay: wake hold failed: {type(error).__name__}: {error}")

    def unclaim(self, reply: dict[str, Any], session: str) -> None:
        """The woken client was gone when its reply was sent: the items go back to pending
        (its next hook delivers them)."""
        ids = reply.get("ids")
        store = self._store()
        if store is not None and isinstance(ids, list) and ids:
            store.unmark_delivered(session, [int(i) for i in ids])

    # -- events the relay applies ------------------------------------------------------------

    def saw(self, request: dict[str, Any]) -> None:
        """The relay applied an event: its session resumed (or ended); it may have addressed
        someone (an interface notice): look again."""
        with self.lock:
            if not self.waiters:
                return
            session = request.get("session")
            name = request.get("event")
            waiter = self.waiters.get(session) if isinstance(session, str) else None
            if waiter is not None and name == "session-end":
                waiter.finish({"done": "ended"})
            elif waiter is not None and name not in IDLE_EVENTS:
                waiter.finish({"done": "resumed"})
            self.nudged = True
            self.lock.notify_all()

    def closing(self, pid: int) -> int:
        """The agent process ``pid`` is shutting down (its MCP server says so as it stops):
        its sessions' waits end now, before the agent's own wait for background hooks
        (Claude Code gives them 30 s at exit, then kills them)."""
        with self.lock:
            ended = [w for w in self.waiters.values() if w.pid == pid]
            # A wait its agent starts as it shuts down (its last Stop) may arrive after this.
            now = time.monotonic()
            self.closing_pids = {p: t for p, t in self.closing_pids.items() if t > now}
            self.closing_pids[pid] = now + CLOSING_MEMORY
        for waiter in ended:
            waiter.finish({"done": "agent closing"})
        return len(ended)

    def nudge(self) -> None:
        with self.lock:
            self.nudged = True
            self.lock.notify_all()

    def close(self, reply: dict[str, Any]) -> None:
        """End every wait with ``reply``, then wait (briefly) for the checking thread to leave
        the store: the caller closes the store next, and closing a SQLite connection another
        thread is querying crashes the process."""
        with self.lock:
            self.closed = True
            for waiter in self.waiters.values():
                waiter.finish(reply)
            self.lock.notify_all()
            thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(CLOSE_WAIT)

    # -- the one thread ----------------------------------------------------------------------

    def _run(self) -> None:
        version: int | None = None
        last_query = 0.0
        while True:
            with self.lock:
                if not self.waiters or self.closed:
                    self.thread = None
                    return
                self.lock.wait_for(lambda: self.nudged or self.closed, timeout=TICK)
                nudged, self.nudged = self.nudged, False
                waiters = list(self.waiters.values())
            for waiter in waiters:
                if not waiter.alive():
                    waiter.finish({"done": "gone"})
            live = [w for w in waiters if not w.done.is_set()]
            try:
                store = self._store()
                if store is None:
                    continue
                self._forget(store, waiters)
                if not live:
                    continue
                now = time.monotonic()
                current = store.data_version()
                due = now - last_query >= (POLL_NO_VERSION if current is None else FULL_EVERY)
                if nudged or due or current != version:
                    version, last_query = current, now
                    self._answer(store, live)
            except Exception as error:  # noqa: BLE001 - the waits outlive any one failure
                paths.log(f"relay: wake check failed: {type(error).__name__}: {error}")
                time.sleep(TICK)

    def _answer(self, store: Store, live: list[Waiter]) -> None:
        self.queries += 1
        found = wake.ready(store, [w.session for w in live])
        for waiter in live:
            if waiter.session not in found:
                continue
            if found[waiter.session]:
                waiter.finish({"done": "ended"})
                continue
            if not waiter.alive():
                waiter.finish({"done": "gone"})
                continue
            items = wake.claim(store, waiter.session)
            if items and waiter.deliver is not None:
                if waiter.finish({"wake": "queued", "ids": [o.id for o in items]}):
                    self._deliver(waiter.session, waiter.deliver, items)
                continue
            if items and not waiter.finish(
                {
                    "wake": briefing.wake_text(store, waiter.session, items),
                    "ids": [o.id for o in items],
                }
            ):
                store.unmark_delivered(waiter.session, [o.id for o in items])

    def _deliver(self, session: str, deliver: Deliver, items: list[Observation]) -> None:
        """Run a watch's delivery in a thread of its own (it may take seconds); its items go
        back to pending when it fails (the session's next hook delivers them)."""

        def run() -> None:
            try:
                reached = deliver(items)
            except Exception as error:  # noqa: BLE001 - a failed delivery unclaims
                paths.log(f"relay: wake delivery failed: {type(error).__name__}: {error}")
                reached = False
            store = self._store()
            if not reached and store is not None:
                store.unmark_delivered(session, [o.id for o in items])

        threading.Thread(target=run, name="relay-wake-delivery", daemon=True).start()
