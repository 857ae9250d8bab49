"""Semantic and hybrid search: embeddings, backfill, an in-memory vector index, RRF fusion.

Never on the hook path (numpy and the embedders load here). The long-lived MCP server keeps
one :class:`SearchEngine` whose index is loaded once and extended incrementally; the CLI builds
one per command. Keyword search (:mod:`colony_tasks.search`) stays the fallback whenever no
embedder is configured or no vectors exist yet.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Sequence

import numpy as np

from . import settings
from .embeddings import Embedder, get_embedder
from .search import Hit, keyword_search
from .store import Store

RRF_K = 60
CANDIDATES = 50
# Semantic candidates must be within this fraction of the best cosine: weak neighbours that sit
# at middling ranks in both lists otherwise push a keyword #1 down (bench/search_eval.py: MRR
# 0.627 -> 0.673 with minilm, 0.618 -> 0.621 with the static model).
RELATIVE_FLOOR = 0.8
BATCH = 256


def content_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()


def to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes, dim: int) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4", count=dim)


def configured_embedder(name: str | None = None) -> Embedder | None:
    """The embedder named by ``name`` or by the ``search.embedder`` setting (None for none)."""
    return get_embedder(name or settings.get("search", "embedder") or "static")


# -- backfill ---------------------------------------------------------------------------------


def backfill(
    store: Store,
    embedder: Embedder,
    *,
    batch: int = BATCH,
    limit: int | None = None,
    owner: str | None = None,
    progress: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> int:
    """Embed observations that have no vector for the embedder's model; returns how many.

    Rows are leased in ``BEGIN IMMEDIATE`` before embedding, so concurrent backfills (one per
    MCP server) never embed a row twice; each batch is written in one transaction. A text whose
    hash already has a vector for this model reuses it instead of being embedded again.
    """
    owner = owner or f"{os.getpid()}-{threading.get_ident()}"
    model = embedder.model_id
    done = 0
    before: int | None = None
    try:
        while limit is None or done < limit:
            if should_stop is not None and should_stop():
                break
            size = batch if limit is None else min(batch, limit - done)
            leased = store.lease_unembedded(model, owner, limit=size, before_id=before)
            if not leased:
                break
            before = leased[-1][0]
            hashes = [content_hash(text) for _, text in leased]
            known = store.vectors_by_hash(model, list(set(hashes)))
            todo = [i for i, h in enumerate(hashes) if h not in known]
            if todo:
                vectors = embedder.embed([leased[i][1] for i in todo])
                for position, vector in zip(todo, vectors, strict=True):
                    known.setdefault(hashes[position], (embedder.dim, to_blob(vector)))
            rows = []
            for position, (obs_id, _) in enumerate(leased):
                dim, blob = known[hashes[position]]
                rows.append((obs_id, dim, hashes[position], blob))
            done += store.store_vectors(model, owner, rows)
            if progress is not None:
                progress(len(rows))
    finally:
        store.release_leases(model, owner)
    return done


# -- the index --------------------------------------------------------------------------------


class VectorIndex:
    """All vectors of one model as a float32 matrix, loaded once and extended incrementally."""

    def __init__(self, model: str, dim: int) -> None:
        self.model, self.dim = model, dim
        self.ids = np.empty(0, dtype=np.int64)
        self.matrix = np.empty((0, dim), dtype=np.float32)
        self.last_row = 0
        self._lock = threading.Lock()

    def refresh(self, store: Store) -> int:
        """Append vectors stored since the last refresh; returns how many were added."""
        added = 0
        while True:
            fetched = store.vectors_after(self.model, self.last_row)
            if not fetched:
                return added
            usable = [r for r in fetched if r[2] == self.dim]
            if usable:
                ids = np.fromiter((r[1] for r in usable), dtype=np.int64, count=len(usable))
                block = np.frombuffer(b"".join(r[3] for r in usable), dtype="<f4").reshape(
                    len(usable), self.dim
                )
                with self._lock:
                    self.ids = np.concatenate([self.ids, ids])
                    self.matrix = np.vstack([self.matrix, block])
                added += len(usable)
            self.last_row = fetched[-1][0]

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def top(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(observation id, cosine) of the ``k`` nearest vectors."""
        with self._lock:
            ids, matrix = self.ids, self.matrix
        if ids.shape[0] == 0 or k <= 0:
            return []
        scores = matrix @ np.asarray(query, dtype=np.float32)
        k = min(k, scores.shape[0])
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best])]
        return [(int(ids[i]), float(scores[i])) for i in best]


# -- hybrid search ----------------------------------------------------------------------------


def rrf(*rankings: Sequence[int], k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion of ranked id lists, best first."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores.items(), key=lambda pair: (-pair[1], -pair[0]))


class SearchEngine:
    """Keyword, semantic and hybrid search over one store with one embedder."""

    def __init__(self, store: Store, embedder: Embedder | None) -> None:
        self.store = store
        self.embedder = embedder
        self.index = VectorIndex(embedder.model_id, embedder.dim) if embedder else None

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        task_id: int | None = None,
        kinds: Sequence[str] | None = None,
        semantic: bool | None = None,
    ) -> list[Hit]:
        """Hybrid when vectors exist (or ``semantic`` is True); keyword-only otherwise."""
        keyword = keyword_search(
            self.store, query, limit=max(limit, CANDIDATES), task_id=task_id, kinds=kinds
        )
        if semantic is False or self.embedder is None or self.index is None:
            return keyword[:limit]
        self.index.refresh(self.store)
        if len(self.index) == 0 or not (query or "").strip():
            return keyword[:limit]
        vector = self.embedder.embed([query])[0]
        if not np.any(vector):
            return keyword[:limit]
        nearest = self._filtered(self.index.top(vector, CANDIDATES * 4), task_id, kinds)
        if nearest and nearest[0][1] > 0:
            floor = RELATIVE_FLOOR * nearest[0][1]
            nearest = [(i, score) for i, score in nearest if score >= floor]
        by_id = {hit.id: hit for hit in keyword}
        fused = rrf([h.id for h in keyword], [i for i, _ in nearest])[:limit]
        missing = [i for i, _ in fused if i not in by_id]
        for obs in self.store.get_observations(missing):
            by_id[obs.id] = Hit(
                obs.id, obs.kind, obs.handle, obs.task_id, obs.created_at, _snippet(obs.text), 0.0
            )
        return [by_id[i]._replace(score=round(score, 6)) for i, score in fused if i in by_id]

    def _filtered(
        self, nearest: list[tuple[int, float]], task_id: int | None, kinds: Sequence[str] | None
    ) -> list[tuple[int, float]]:
        if task_id is None and not kinds:
            return nearest[:CANDIDATES]
        wanted = set(kinds or ())
        keep = []
        for obs in self.store.get_observations([i for i, _ in nearest]):
            if (task_id is None or obs.task_id == task_id) and (not wanted or obs.kind in wanted):
                keep.append(obs.id)
        score = dict(nearest)
        return [(i, score[i]) for i in keep][:CANDIDATES]


def _snippet(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
