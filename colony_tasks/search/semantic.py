"""Semantic and hybrid search: embeddings, backfill, a warm vector index, fusion.

Never on the hook path (numpy and the embedders load here). Every front end goes through
:class:`colony_tasks.search.Searcher`, which keeps one :class:`SearchEngine` per store; the
long-lived MCP server therefore loads its index once and extends it incrementally. Short-lived
processes (the CLI) use the on-disk index cache beside the database
(:mod:`colony_tasks.search.vector_index`), so a query maps the cached vectors instead of reading
every blob out of SQLite. Keyword search
(:mod:`colony_tasks.search.keywords`) stays the fallback whenever no embedder or no vector exists.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence

import numpy as np

from ..base import settings
from ..store import Store
from .embeddings import (
    DEFAULT_BACKEND,
    FALLBACK_BACKEND,
    MODEL_IDS,
    SUPERSEDED,
    Embedder,
    EmbedderUnavailable,
    get_embedder,
)
from .hits import FUSION, Fusion, Hit, clip, fuse, looks_like_identifier, rrf
from .keywords import keyword_search
from .vector_index import VectorIndex, cache_dir_for

__all__ = [
    "BATCH",
    "Fusion",
    "SearchEngine",
    "VectorIndex",
    "backfill",
    "configured_embedder",
    "content_hash",
    "rrf",
]

BATCH = 256


def content_hash(text: str) -> str:
    import hashlib  # here: a search process never hashes, and OpenSSL's import costs ~3 ms

    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()


def to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def configured_backend() -> str:
    """The backend the ``search.embedder`` setting names (``minilm`` by default)."""
    return (settings.get("search", "embedder") or DEFAULT_BACKEND).strip().lower()


def configured_embedder(name: str | None = None) -> Embedder | None:
    """The embedder named by ``name`` or by the ``search.embedder`` setting (None for none).

    When the setting names ``minilm`` and its files are absent (a trimmed install), the static
    table stands in: search keeps working at a lower recall. A backend named by ``name`` is
    loaded as asked, or raises :class:`EmbedderUnavailable`.
    """
    if name:
        return get_embedder(name)
    backend = configured_backend()
    try:
        return get_embedder(backend)
    except EmbedderUnavailable:
        if backend != DEFAULT_BACKEND:
            raise
        return get_embedder(FALLBACK_BACKEND)


def configured_model_id() -> str | None:
    """The model id vectors are made with here, without loading a model (None for none)."""
    backend = configured_backend()
    if backend == DEFAULT_BACKEND and not minilm_installed():
        backend = FALLBACK_BACKEND
    return MODEL_IDS.get(backend)


def minilm_installed() -> bool:
    """Whether the numpy MiniLM's weight file is present (cheap: no model is loaded)."""
    from .embeddings.bert import MODEL_DIR

    return (MODEL_DIR / "model.safetensors").is_file()


# -- upgrades ----------------------------------------------------------------------------------


def retire_superseded(store: Store, model: str) -> int:
    """Drop the vectors of the models ``model`` replaced, once every observation has a
    ``model`` vector; returns how many were dropped (0 while re-embedding is under way).

    Called after a backfill finds nothing left to embed (the MCP server's worker,
    ``colony-tasks embed``, ``doctor --fix``), so an upgrade needs no manual step.
    """
    old = [m for m in SUPERSEDED.get(model, ()) if m != model]
    if not old:
        return 0
    present = store.vectors.models_present(old)
    if not present or store.vectors.count_unembedded(model):
        return 0
    dropped = store.vectors.drop(present)
    cache = cache_dir_for(store)
    if cache is not None:
        for name in present:
            VectorIndex(name, 0, cache)._discard_cache()
    return dropped


def search_embedder(store: Store) -> tuple[Embedder | None, bool]:
    """The embedder a search should use now, and whether it is an interim one.

    The configured one, except while an upgrade re-embeds: as long as a model it supersedes
    has more vectors than it and can still run here (the static table always can), searching
    that model's vectors finds more than the few new ones would. Raises
    :class:`EmbedderUnavailable` like :func:`configured_embedder`.
    """
    embedder = configured_embedder()
    if embedder is None:
        return None, False
    present = store.vectors.models_present(SUPERSEDED.get(embedder.model_id, ()))
    if not present:
        return embedder, False
    counts = store.vectors.counts()
    best = max(present, key=lambda m: counts.get(m, 0))
    backend = {model: name for name, model in MODEL_IDS.items()}.get(best)
    if backend is None or counts.get(embedder.model_id, 0) >= counts.get(best, 0):
        return embedder, False
    try:
        previous = get_embedder(backend)
    except EmbedderUnavailable:
        return embedder, False
    return (previous, True) if previous is not None else (embedder, False)


def embedding_state(store: Store) -> dict:
    """Where embedding stands: the configured model, how many observations still lack its
    vector, and the vectors of other models (superseded ones are dropped when it is done)."""
    model = configured_model_id()
    counts = store.vectors.counts()
    others = {m: n for m, n in counts.items() if m != model}
    return {
        "model": model,
        "vectors": counts.get(model, 0) if model else 0,
        "missing": store.vectors.count_unembedded(model) if model else 0,
        "superseded": {m: n for m, n in others.items() if m in SUPERSEDED.get(model or "", ())},
        "others": {m: n for m, n in others.items() if m not in SUPERSEDED.get(model or "", ())},
    }


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

    When nothing is left to embed, the vectors of the models this one superseded are dropped
    (:func:`retire_superseded`): an upgrade re-embeds in the background and cleans up after.

    Rows are leased in ``BEGIN IMMEDIATE`` before embedding, so concurrent backfills (one per
    MCP server) never embed a row twice; each batch is written in one transaction. A text whose
    hash already has a vector for this model reuses it instead of being embedded again.
    """
    owner = owner or f"{os.getpid()}-{threading.get_ident()}"
    model = embedder.model_id
    done = 0
    before: int | None = None
    exhausted = False
    try:
        while limit is None or done < limit:
            if should_stop is not None and should_stop():
                break
            size = batch if limit is None else min(batch, limit - done)
            leased = store.vectors.lease_unembedded(model, owner, limit=size, before_id=before)
            if not leased:
                exhausted = True
                break
            before = leased[-1][0]
            hashes = [content_hash(text) for _, text in leased]
            known = store.vectors.by_hash(model, list(set(hashes)))
            todo = [i for i, h in enumerate(hashes) if h not in known]
            if todo:
                vectors = embedder.embed([leased[i][1] for i in todo])
                for position, vector in zip(todo, vectors, strict=True):
                    known.setdefault(hashes[position], (embedder.dim, to_blob(vector)))
            rows = []
            for position, (obs_id, _) in enumerate(leased):
                dim, blob = known[hashes[position]]
                rows.append((obs_id, dim, hashes[position], blob))
            done += store.vectors.save(model, owner, rows)
            if progress is not None:
                progress(len(rows))
    finally:
        store.vectors.release_leases(model, owner)
    cache = cache_dir_for(store)
    if done and cache is not None:  # bring the on-disk index up to date for the next reader
        VectorIndex(model, embedder.dim, cache).refresh(store)
    if exhausted:
        retire_superseded(store, model)
    return done


# -- hybrid search ----------------------------------------------------------------------------

# Keyword hits without a vector yet that a search embeds itself (a few new items: the worker
# embeds the rest within seconds).
FRESH_LIMIT = 16


class SearchEngine:
    """Keyword, semantic and hybrid search over one store with one embedder."""

    def __init__(
        self, store: Store, embedder: Embedder | None, *, fusion: Fusion = FUSION, cache=True
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.fusion = fusion
        self.index = (
            VectorIndex(embedder.model_id, embedder.dim, cache_dir_for(store) if cache else None)
            if embedder
            else None
        )

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
        depth = max(limit, self.fusion.keyword_depth)
        keyword = keyword_search(self.store, query, limit=depth, task_id=task_id, kinds=kinds)
        if semantic is False or self.embedder is None or self.index is None:
            return keyword[:limit]
        nearest = self.nearest(query, task_id=task_id, kinds=kinds, fresh=[h.id for h in keyword])
        if nearest is None:
            return keyword[:limit]
        by_id = {hit.id: hit for hit in keyword}
        identifier = looks_like_identifier(query)
        fused = fuse([h.id for h in keyword], nearest, self.fusion, identifier=identifier)[:limit]
        missing = [i for i, _ in fused if i not in by_id]
        for obs in self.store.get_observations(missing):
            by_id[obs.id] = Hit(
                obs.id, obs.kind, obs.handle, obs.task_id, obs.created_at, clip(obs.text), 0.0
            )
        return [by_id[i]._replace(score=round(score, 6)) for i, score in fused if i in by_id]

    def nearest(
        self,
        query: str,
        *,
        task_id: int | None = None,
        kinds: Sequence[str] | None = None,
        fresh: Sequence[int] = (),
    ) -> list[tuple[int, float]] | None:
        """(id, cosine) semantic candidates, best first; None when there is nothing to ask.

        ``fresh``: keyword hits (best first). Those without a vector yet (written since the
        worker last ran) are embedded now, at most :data:`FRESH_LIMIT`, and take their place
        among the candidates by cosine, so a new item ranks as it will once embedded.
        """
        assert self.embedder is not None and self.index is not None
        self.index.refresh(self.store)
        if len(self.index) == 0 or not (query or "").strip():
            return None
        vector = self.embedder.embed([query])[0]
        if not np.any(vector):
            return None
        depth = self.fusion.semantic_depth
        filtered = task_id is not None or bool(kinds)
        nearest = self.index.exact_top(self.store, vector, depth * 4 if filtered else depth)
        nearest = self._filtered(nearest, task_id, kinds)[:depth]
        if fresh:
            nearest = self._with_fresh(vector, fresh[: self.fusion.keyword_depth], nearest)
        return nearest

    def _with_fresh(
        self, vector: np.ndarray, candidates: Sequence[int], nearest: list[tuple[int, float]]
    ) -> list[tuple[int, float]]:
        """``nearest`` with the cosines of the ``candidates`` that have no vector yet."""
        assert self.embedder is not None
        listed = {i for i, _ in nearest}
        ask = [i for i in candidates if i not in listed]
        if not ask:
            return nearest
        stored = self.store.vectors.for_observations(self.embedder.model_id, ask)
        unembedded = [i for i in ask if i not in stored][:FRESH_LIMIT]
        if not unembedded:
            return nearest
        texts = {obs.id: obs.text for obs in self.store.get_observations(unembedded)}
        ids = [i for i in unembedded if i in texts]
        if not ids:
            return nearest
        cosines = self.embedder.embed([texts[i] for i in ids]) @ np.asarray(vector, np.float32)
        merged = nearest + [(i, float(c)) for i, c in zip(ids, cosines, strict=True)]
        merged.sort(key=lambda pair: (-pair[1], -pair[0]))
        return merged[: self.fusion.semantic_depth]

    def _filtered(
        self, nearest: list[tuple[int, float]], task_id: int | None, kinds: Sequence[str] | None
    ) -> list[tuple[int, float]]:
        if task_id is None and not kinds:
            return nearest
        wanted = set(kinds or ())
        keep = set()
        for obs in self.store.get_observations([i for i, _ in nearest]):
            if (task_id is None or obs.task_id == task_id) and (not wanted or obs.kind in wanted):
                keep.add(obs.id)
        return [(i, score) for i, score in nearest if i in keep]
