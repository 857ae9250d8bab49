"""Team mode's relay: the spooled outbox applied in order on the team's PostgreSQL store.

Hooks spool their event in the local outbox before they ask (:mod:`colony_tasks.hooks.spool`),
so a relay that is down, slow or killed loses nothing. One worker thread applies the outbox —
each session's rows in order, the sessions in turn (:meth:`Outbox.pending`) — the rows waiting
at once in batches: each batch one transaction (one commit; it ends with its first event that
writes into a task, which other machines' items then wait for) holding every event's effects
and its idempotency key
(:func:`colony_tasks.relay.apply.apply_batch`), so a relay killed at any point never applies an
event twice and never loses one. A batch one of whose events fails (the core refuses it, a
statement fails) is rolled back whole and its rows up to that one are applied one transaction
each, as a lone row always is. When the server is away it backs off (0.2 s doubling to 10 s) and
answers hooks at once; each session is told once that the team store is unreachable and once
that it is back. A reply its hook did not wait for is shown at the session's next hook that
can show context, once (:mod:`colony_tasks.relay.late`). The relay holds one connection to the
server: searches and wake waits use the worker's (each statement, or the worker's whole batch,
at a time), so a machine costs the team's server one connection, however many sessions it
runs.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from ..base import backend, paths
from ..base.agent_events import EVENTS
from ..base.errors import ColonyError
from ..base.redact import redact
from ..store.pg import PgStore, is_connection_error
from . import apply as apply_mod
from .late import LateReplies
from .outbox import Outbox, outbox_path
from .server import KEEP_KEYS, PRUNE_EVERY, SERVE_WAIT, Relay

#: An event in flight for longer than this means the server is slow or hung: hooks waiting on
#: the relay get an empty answer at once (their events stay spooled and are applied later).
SLOW_EVENT = 0.2
#: The same for a hook whose event comes before a tool runs: its warning, or its deny in block
#: mode, is worth most before the edit (one that arrives after can no longer prevent it), and an
#: edit's PreToolUse takes 9 round trips: about 0.2 s with the store 20 ms away.
SLOW_BEFORE_TOOL = 0.35
#: The same for connecting (TLS and authentication take longer than an event).
SLOW_CONNECT = 1.0
CONNECT_TIMEOUT = 2.0
BACKOFF_FIRST, BACKOFF_MAX = 0.2, 10.0
#: A batch takes at most this many spooled rows, and starts no row after this many seconds
#: (its transaction holds the store's lock shared meanwhile: an MCP tool waits for it).
BATCH_ROWS = 32
BATCH_SECONDS = 0.5
#: A hook's own wait is cut this much short, so its reply is sent before the hook gives up.
CLIENT_MARGIN = 0.1
#: A reply its hook has not collected after this long is late (its hook is gone).
COLLECT_WITHIN = 10.0
#: How long late replies are kept for a session that never asks again.
KEEP_LATE = 24 * 3600

DOWN_NOTICE = (
    "colony-tasks: the team store is unreachable. Your activity is saved on this machine and"
    " delivered when it is back; thread updates and claim warnings pause until then."
)
BACK_NOTICE = (
    "colony-tasks: the team store is reachable again; the activity saved meanwhile has been"
    " delivered."
)


class TeamRelay(Relay):
    """The relay of one team store (see the module docstring)."""

    backend = "postgresql"

    def __init__(self, url: str) -> None:
        super().__init__(backend.store_key(url))
        self.url = url
        self.outbox = Outbox(outbox_path(self.key))
        self.late = LateReplies(self.outbox.conn)
        self.late.orphaned()
        self.store: PgStore | None = None
        # row id → (when, reply, the agent pid the row was spooled with)
        self.results: dict[int, tuple[float, dict[str, Any], int | None]] = {}
        self.wake = False
        self.down = False
        self.retry_at = 0.0
        self.backoff = BACKOFF_FIRST
        self.last_prune = time.time()
        self.prune = False
        self._connecting = threading.Lock()  # the worker, a search and a wait may connect
        self.busy_since: float | None = None
        self.busy_limit = SLOW_EVENT
        # session id (as spooled) → when one of its rows was last applied (monotonic): the
        # outbox serves the sessions in turn (Outbox.pending)
        self.turns: dict[str, float] = {}
        self.worker = threading.Thread(target=self.work, name="relay-worker", daemon=True)

    def start(self) -> None:
        self.worker.start()

    # -- the worker: the outbox, in order --------------------------------------------------

    def working(self) -> bool:
        """The worker applies rows until the relay stops or retires (a relay of another
        version must serve nothing more)."""
        return not (self.stopping or self.retiring)

    def work(self) -> None:
        while self.working():
            with self.cond:
                self.cond.wait_for(lambda: self.wake or self.stopping, timeout=self._nap())
                self.wake = False
            try:
                if self.prune and self.store is not None:
                    self.prune = False
                    self.store.prune_event_keys(time.time() - KEEP_KEYS)
                    with self.cond:
                        self.late.prune(time.time() - KEEP_LATE)
                self.flush()
            except Exception as error:  # noqa: BLE001 - the relay must outlive any one event
                paths.log(f"relay: flush failed: {redact(backend.redact_url(repr(error)))}")

    def _nap(self) -> float:
        if self.down:
            return max(self.retry_at - time.monotonic(), 0.01)
        return 1.0

    def flush(self) -> None:
        # The next batch is read anew each time: a row spooled meanwhile takes its session's
        # turn (Outbox.pending) rather than waiting behind every row read before it.
        while self.working():
            rows = self.outbox.pending(BATCH_ROWS, self.turns)
            if not rows:
                self.turns.clear()
                # Applied rows are zeroed (secure_delete); fold the WAL too, so no delivered
                # event lingers in it.
                self.outbox.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                return
            if not self._connect() or self._apply_batch(rows) is None:
                return

    def _connect(self) -> bool:
        with self._connecting:
            return self._connected()

    def _connected(self) -> bool:
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

    def _apply_batch(self, rows: list[Any]) -> int | None:
        """Apply the first rows in one transaction; how many rows were settled, None when the
        server went away (nothing of the batch was applied then)."""
        requests = []
        for row in rows:
            try:
                requests.append(json.loads(row["payload"]))
            except ValueError:
                break  # the row fails alone (_apply), after the rows before it
        if len(requests) < 2:
            return 1 if self._apply(rows[0]) else None
        store = self.store
        assert store is not None
        try:
            replies = apply_mod.apply_batch(store, requests, BATCH_SECONDS, self._starting)
        except Exception as error:  # noqa: BLE001
            self.busy_since = None
            cause = error.__cause__ if isinstance(error, apply_mod.BatchFailed) else error
            if cause is not None and is_connection_error(cause):
                self._went_down(cause)
                return None
            # Rolled back whole: the rows up to the failing one, one transaction each.
            upto = error.index + 1 if isinstance(error, apply_mod.BatchFailed) else len(requests)
            for row in rows[:upto]:
                if not self._apply(row):
                    return None
            return upto
        self.busy_since = None
        for row, request, reply in zip(rows, requests, replies, strict=False):
            self._done(row)
            if isinstance(reply, apply_mod.BadRequest):
                paths.log(f"relay: event #{row['id']} dropped: {reply}")
                self._answer(row, {})
                continue
            self.served += 1
            self._answer(row, reply)
            self.waits.saw(request)
        return len(replies)

    def _done(self, row: Any) -> None:
        """The row is applied (or dropped): off the outbox, its session's turn taken."""
        self.outbox.done(row["id"])
        self.turns[row["session_id"]] = time.monotonic()

    def _starting(self) -> None:
        """An event starts: hooks waiting for a row of the batch see it making progress."""
        self.busy_since = time.monotonic()

    def _apply(self, row: Any) -> bool:
        """Apply one spooled event exactly once; False when the server went away."""
        store = self.store
        assert store is not None
        reply: dict[str, Any] = {}
        try:
            request = json.loads(row["payload"])
            self.busy_since = time.monotonic()
            reply = apply_mod.apply_alone(store, request)
        except apply_mod.BadRequest as error:
            self.busy_since = None
            paths.log(f"relay: event #{row['id']} dropped: {error}")
            self._done(row)
            self._answer(row, {})
            return True
        except ColonyError as refused:
            # The core refused the event (e.g. a hook of another process for a session it does
            # not own): final, as a SQLite-mode hook logs it and carries on.
            self.busy_since = None
            paths.log(f"relay: event {row['event']} #{row['id']} refused: {redact(str(refused))}")
            self._done(row)
            self._answer(row, {})
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
                self._answer(row, {})
            return True
        self.busy_since = None
        self.served += 1
        self._done(row)
        self._answer(row, reply)
        self.waits.saw(request)
        return True

    def _answer(self, row: Any, reply: dict[str, Any]) -> None:
        """Hand an applied row's reply to its hook (:meth:`reply_for`); a reply its hook left
        without is kept for the session's next hook instead (:mod:`.late`), and a session
        that ended drops what was kept for it."""
        row_id, owner, session = row["id"], row["agent_pid"], row["session_id"]
        now = time.monotonic()
        with self.cond:
            late = speaks(row["event"], session) and self.late.kept(row_id, session, owner, reply)
            if row["event"] == "session-end" and session:
                self.late.ended(session)
            if not late:
                self.results[row_id] = (now, reply, owner)
            stale = [k for k, (at, _, _) in self.results.items() if now - at > COLLECT_WITHIN]
            for key in stale:
                del self.results[key]
            self.late.uncollected(stale)
            self.cond.notify_all()

    def reply_for(
        self,
        row_id: int,
        event: str,
        session: str,
        chain: list[int] | None = None,
        wait: float = SERVE_WAIT,
    ) -> dict[str, Any]:
        """The rendered result of the hook's event once applied; while the server is away, the
        one-time notice (or nothing). A session told it was away hears once that it is back,
        in the first result it actually receives. The result goes only to a client of the
        agent process the row was spooled under (``chain``: the asking client's, as the kernel
        tells it): another process asking for someone's row id gets nothing, and the row's
        own hook still gets its reply. ``wait``: how long the hook waits; a result not ready
        by then is shown at the session's next hook that can show context, before that hook's
        own, with what else came late (:mod:`.late`)."""
        talks = speaks(event, session)
        late = ""
        with self.cond:
            self.last_request = time.monotonic()
            self.wake = True
            self.cond.notify_all()
            deadline = time.monotonic() + min(SERVE_WAIT, max(wait - CLIENT_MARGIN, 0.0))
            while row_id not in self.results and not self.down and not self.stopping:
                now = time.monotonic()
                busy = self.busy_since
                limit = self.busy_limit
                if event == "pre-tool-use":
                    limit = max(limit, SLOW_BEFORE_TOOL)
                if now >= deadline or (busy is not None and now - busy > limit):
                    break
                self.cond.wait(0.02)
            found = self.results.get(row_id)
            if found is None and talks:
                kept = self.late.own(row_id)  # applied by a relay since restarted
                found = None if kept is None else (0.0, kept[0], kept[1])
            if found is not None and chain is not None and found[2] not in (None, *chain):
                paths.log(f"relay: the reply to event #{row_id} refused to another agent's client")
                return {}
            self.results.pop(row_id, None)
            if talks:
                if found is None:
                    self.late.left(row_id, session)
                else:
                    self.late.collected(row_id)
                if found is None or not found[1].get("deny"):  # a deny shows nothing else
                    late = self.late.take(session, chain)
        if found is not None:
            reply = found[1]
            back = talks and self.outbox.clear_told_down(session)
            if back or late:
                reply["context"] = _joined(back and BACK_NOTICE, late, reply.get("context"))
            return reply
        if self.down and talks and not self.outbox.told_down(session):
            self.outbox.mark_told_down(session)
            return {"context": _joined(DOWN_NOTICE, late)}
        return {"context": late} if late else {}

    def event(self, request: dict[str, Any], chain: list[int] | None) -> dict[str, Any]:
        """A hook's spooled event: wait for its row's reply (see :meth:`reply_for`)."""
        row_id = request.get("id")
        if not isinstance(row_id, int):
            return {"error": "team mode takes spooled events only"}
        wait = request.get("wait")
        return self.reply_for(
            row_id,
            str(request.get("event", "")),
            str(request.get("session") or ""),
            chain,
            wait if isinstance(wait, int | float) and not isinstance(wait, bool) else SERVE_WAIT,
        )

    def search_store(self) -> PgStore | None:
        """The worker's connection (connected now if it is not yet, unless the server is
        away and not yet due to be tried again): the store serialises its statements, so a
        search waits at most for the batch being applied."""
        return self.store if self._connect() else None

    def wake_store(self) -> PgStore | None:
        """The worker's connection, as for :meth:`search_store` (the waits ask once a second
        while sessions wait)."""
        return self.store if self._connect() else None

    def idle(self) -> bool:
        return super().idle() and not self.outbox.counts()["pending"]

    def tick(self) -> None:
        if time.time() - self.last_prune > PRUNE_EVERY:
            self.last_prune = time.time()
            with self.cond:
                self.prune = True
                self.wake = True
                self.cond.notify_all()

    def close(self) -> None:
        super().close()
        self.stop()
        if self.worker.is_alive():
            self.worker.join(SERVE_WAIT)
        if self.store is not None:
            self.store.close()


def speaks(event: str, session: str) -> bool:
    """Whether a reply to ``event`` of ``session`` can give the agent text."""
    row = EVENTS.get(event)
    return row is not None and not row.quiet and bool(session)


def _joined(*parts: object) -> str:
    return "\n\n".join(p for p in parts if isinstance(p, str) and p)
