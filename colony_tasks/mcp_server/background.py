"""Background workers of the MCP server: daemon threads that run while the server runs.

The embedding worker backfills vectors; the index worker keeps the dependency graph of every
work tree with a live session current and relays interface changes (:mod:`colony_tasks.depgraph.interface_changes`).

The embedding worker opens its own connection (SQLite connections are not shared across threads here), embeds
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
INDEX_SECONDS = 2.0


class _Worker:
    """A daemon thread running ``_run`` until :meth:`stop`, on the store at ``path``."""

    name = "colony-worker"

    def __init__(self, path: str) -> None:
        self.path = path  # a SQLite file or a postgresql:// URL: see open_store
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, name=self.name, daemon=True)

    def start(self):  # -> Self
        self.thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.stop_event.set()
        if self.thread.is_alive():
            self.thread.join(timeout)

    def _run(self) -> None:
        raise NotImplementedError


class EmbeddingWorker(_Worker):
    name = "colony-embed"

    def __init__(self, path: str, *, idle: float = IDLE_SECONDS) -> None:
        super().__init__(path)
        self.idle = idle
        self.embedded = 0

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
        from colony_tasks.search import semantic  # numpy and the model load in the worker only

        embedder = semantic.configured_embedder()
        return None if embedder is None else (open_store(self.path), embedder)

    def step(self, store: Store, embedder) -> int:
        """Embed one batch; returns how many rows got vectors."""
        from colony_tasks.search import semantic

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


class IndexWorker(_Worker):
    """Every ``interval`` seconds, one :func:`interfaces.index_live` pass on its own connection.

    The first pass over a work tree builds its graph (seconds for thousands of files); later
    passes re-read only the files edited since. A failing pass is logged and retried at the
    next interval: a bad repository must not stop the relay for the others.
    """

    name = "colony-index"

    def __init__(self, path: str, *, interval: float = INDEX_SECONDS) -> None:
        super().__init__(path)
        self.interval = interval
        self.passes = 0

    def _run(self) -> None:
        try:
            from colony_tasks.depgraph import (
                interface_changes as interfaces,  # tree-sitter loads in the worker only
            )

            # open_store, like the embedding worker: on a team store ``path`` is its URL,
            # and Store() would have made a SQLite file of that name.
            store = open_store(self.path)
        except Exception as error:  # noqa: BLE001 - the worker must never take the server down
            log.warning("Index worker not started: %s", error)
            return
        cache: dict = {}  # each work tree's graph as this worker last wrote it
        try:
            while not self.stop_event.is_set():
                try:
                    interfaces.index_live(store, cache=cache)
                except Exception as error:  # noqa: BLE001
                    log.warning("Index pass failed: %s", error)
                self.passes += 1
                self.stop_event.wait(self.interval)
        finally:
            store.close()


def start(path: str) -> Callable[[], None]:
    """Start the workers for the store at ``path``; returns the function that stops them."""
    if path == ":memory:":
        return lambda: None
    stops = [EmbeddingWorker(path).start().stop, IndexWorker(path).start().stop]

    def stop() -> None:
        for halt in stops:
            halt()

    return stop
