"""The embedding worker: a daemon thread that backfills vectors while the server runs.

It opens its own connection (SQLite connections are not shared across threads here), embeds
small batches with pauses between them so tool calls never wait long on the write lock, and
coordinates with other servers' workers through the store's leases. Failures are logged to
stderr and end the worker; search then keeps working on keywords and existing vectors.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from colony_tasks.store import Store, open_store

log = logging.getLogger("colony_tasks.mcp")

BATCH = 64
PAUSE_SECONDS = 0.05
IDLE_SECONDS = 5.0


class EmbeddingWorker:
    def __init__(self, path: str, *, idle: float = IDLE_SECONDS) -> None:
        self.path = path
        self.idle = idle
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, name="colony-embed", daemon=True)
        self.embedded = 0

    def start(self) -> EmbeddingWorker:
        self.thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.stop_event.set()
        if self.thread.is_alive():
            self.thread.join(timeout)

    def _run(self) -> None:
        try:
            session = self._open()
        except Exception as error:  # noqa: BLE001 - the worker must never take the server down
            log.warning("Embedding worker not started: %s", error)
            return
        if session is None:
            return
        store, embedder = session
        try:
            while not self.stop_event.is_set():
                done = self.step(store, embedder)
                self.stop_event.wait(PAUSE_SECONDS if done else self.idle)
        except Exception as error:  # noqa: BLE001
            log.warning("Embedding worker stopped: %s", error)
        finally:
            store.close()

    def _open(self):
        from colony_tasks import semantic  # numpy and the model load in the worker only

        embedder = semantic.configured_embedder()
        return None if embedder is None else (open_store(self.path), embedder)

    def step(self, store: Store, embedder) -> int:
        """Embed one batch; returns how many rows got vectors."""
        from colony_tasks import semantic

        done = semantic.backfill(
            store, embedder, batch=BATCH, limit=BATCH, should_stop=self.stop_event.is_set
        )
        self.embedded += done
        return done

    def drain(self) -> int:
        """Run batches in the calling thread until nothing is left (for tests and tools)."""
        session = self._open()
        if session is None:
            return 0
        store, embedder = session
        try:
            while self.step(store, embedder):
                pass
        finally:
            store.close()
        return self.embedded


def start(path: str) -> Callable[[], None]:
    """Start the worker for the store at ``path``; returns the function that stops it."""
    if path == ":memory:":
        return lambda: None
    return EmbeddingWorker(path).start().stop
