"""Semantic and hybrid search: embeddings, backfill, a warm vector index, fusion.

Never on the hook path (numpy and the embedders load here). Every front end goes through
:class:`colony_tasks.search.Searcher`, which keeps one :class:`SearchEngine` per store; the
long-lived MCP server therefore loads its index once and extends it incrementally. Short-lived
processes (the CLI) use the on-disk index cache beside the database (:class:`VectorIndex`), so
a query maps the cached vectors instead of reading every blob out of SQLite. Keyword search
(:mod:`colony_tasks.search.keywords`) stays the fallback whenever no embedder or no vector exists.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

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

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no shared cache, an in-memory index only
    fcntl = None  # type: ignore[assignment]

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


def from_blob(blob: bytes, dim: int) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4", count=dim)


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


# -- the index --------------------------------------------------------------------------------

CHUNK_ROWS = 1_024  # rows converted to float32 per step: a 1 MiB scratch (stays in L2) at dim 256
RESCORE = 4  # approximate candidates re-scored exactly per wanted result
# Keyword hits without a vector yet that a search embeds itself (a few new items: the worker
# embeds the rest within seconds).
FRESH_LIMIT = 16


def quantize(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 codes and per-row float32 scales with ``codes * scale ~= block``."""
    peak = np.abs(block).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    codes = np.rint(block / scales[:, None]).astype(np.int8)
    return codes, scales


class VectorIndex:
    """The vectors of one model as int8 codes with per-row scales, extended incrementally.

    A search scores every row approximately (int8 codes times a scale, in chunks) and
    :meth:`exact_top` re-scores the best candidates with their float32 vectors from the store.
    Memory: ``dim + 12`` bytes per vector (268 MB per million at dim 256, 396 MB at 384), plus
    4 bytes per vector of scores and a 1 MiB scratch while a search runs.

    With ``cache_dir`` the codes live in files there (``<model>.ids``, ``.scales``, ``.codes``
    and a ``.json`` header with the row count and the last ``vectors`` row they hold), mapped
    read-only with ``np.memmap`` and appended to under an exclusive ``flock``: a new process
    maps what earlier ones built and reads only the vectors stored since.
    """

    def __init__(self, model: str, dim: int, cache_dir: Path | str | None = None) -> None:
        self.model, self.dim = model, dim
        self.cache = Path(cache_dir) if cache_dir is not None and fcntl is not None else None
        self.segments: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.last_row = 0
        self._loaded = False
        self._lock = threading.Lock()

    # -- loading and extending ------------------------------------------------------------------

    def refresh(self, store: Store) -> int:
        """Take in vectors stored since the last refresh; returns how many were added."""
        if not self._loaded:
            self._loaded = True
            if self.cache is not None:
                self._map_cache(store)
        added = 0
        while True:
            fetched = store.vectors.after(self.model, self.last_row)
            if not fetched:
                return added
            usable = [r for r in fetched if r[2] == self.dim]
            last = fetched[-1][0]
            if usable:
                ids = np.fromiter((r[1] for r in usable), dtype=np.int64, count=len(usable))
                block = np.frombuffer(b"".join(r[3] for r in usable), dtype="<f4")
                codes, scales = quantize(block.reshape(len(usable), self.dim))
                self._append(ids, scales, codes)
                added += len(usable)
            if self.cache is not None:
                fresh = (ids, scales, codes) if usable else None
                self._write_cache(store, fresh, last)
            self.last_row = last

    def _append(self, ids: np.ndarray, scales: np.ndarray, codes: np.ndarray) -> None:
        with self._lock:
            segments = [*self.segments, (ids, scales, codes)]
            if len(segments) > 8:  # many small refreshes: merge the in-memory tail
                head, tail = segments[:1], segments[1:]
                ids_, scales_, codes_ = (np.concatenate(part) for part in zip(*tail, strict=True))
                segments = [*head, (ids_, scales_, codes_)]
            self.segments = segments

    def _paths(self) -> dict[str, Path]:
        assert self.cache is not None
        stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.model)
        return {
            part: self.cache / f"{stem}.{part}"
            for part in ("json", "ids", "scales", "codes", "lock")
        }

    def _header(self) -> dict | None:
        try:
            header = json.loads(self._paths()["json"].read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if header.get("model") != self.model or header.get("dim") != self.dim:
            return None
        return header

    def _map_cache(self, store: Store) -> None:
        """Map the cached rows, unless the cache is missing or belongs to another database."""
        header = self._header()
        if header is None or not header.get("count"):
            return
        if header["last_row"] > store.vectors.last_row() or header.get("db") != _identity(store):
            self._discard_cache()  # the database was replaced: rebuild from the store
            return
        paths, n = self._paths(), int(header["count"])
        try:
            ids = np.memmap(paths["ids"], dtype="<i8", mode="r", shape=(n,))
            scales = np.memmap(paths["scales"], dtype="<f4", mode="r", shape=(n,))
            codes = np.memmap(paths["codes"], dtype=np.int8, mode="r", shape=(n, self.dim))
        except (OSError, ValueError):
            return
        with self._lock:
            self.segments = [(ids, scales, codes)]
        self.last_row = int(header["last_row"])

    def _discard_cache(self) -> None:
        """Unlink the cache files (a process that mapped them keeps its mapping) to start anew."""
        try:
            fd = os.open(self._paths()["lock"], os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            for part in ("json", "ids", "scales", "codes"):
                self._paths()[part].unlink(missing_ok=True)
        except OSError:
            pass
        finally:
            os.close(fd)

    def _write_cache(self, store: Store, block, last_row: int) -> None:
        """Append one block to the cache files, if they end where this index does."""
        assert self.cache is not None
        try:
            self.cache.mkdir(mode=0o700, parents=True, exist_ok=True)
            paths = self._paths()
            fd = os.open(paths["lock"], os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            self.cache = None  # a read-only data dir: carry on in memory
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            header = self._header() or {"count": 0, "last_row": 0}
            if header["last_row"] != self.last_row:
                return  # another process got further (or the cache is stale): leave it be
            count = int(header["count"])
            if block is not None:
                ids, scales, codes = block
                for part, array, width in (
                    ("ids", ids.astype("<i8"), 8),
                    ("scales", scales.astype("<f4"), 4),
                    ("codes", codes, self.dim),
                ):
                    with _private(paths[part], os.O_WRONLY | os.O_APPEND) as handle:
                        handle.truncate(count * width)  # drop a torn append
                        handle.write(array.tobytes())
                count += len(ids)
            header = {
                "model": self.model,
                "dim": self.dim,
                "count": count,
                "last_row": last_row,
                "db": _identity(store),
            }
            scratch = paths["json"].with_suffix(".json.tmp")
            with _private(scratch, os.O_WRONLY | os.O_TRUNC) as handle:
                handle.write(json.dumps(header).encode())
            os.replace(scratch, paths["json"])
        except OSError:
            self.cache = None
        finally:
            os.close(fd)

    def __len__(self) -> int:
        return sum(int(ids.shape[0]) for ids, _, _ in self.segments)

    # -- searching -----------------------------------------------------------------------------

    def top(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(observation id, approximate cosine) of the ``k`` nearest vectors, best first."""
        with self._lock:
            segments = list(self.segments)
        if k <= 0 or not segments:
            return []
        query = np.asarray(query, dtype=np.float32)
        scratch = np.empty(
            (min(CHUNK_ROWS, max(len(ids) for ids, _, _ in segments)), self.dim), dtype=np.float32
        )
        best_ids: list[np.ndarray] = []
        best_scores: list[np.ndarray] = []
        for ids, scales, codes in segments:
            scores = np.empty(ids.shape[0], dtype=np.float32)
            for first in range(0, ids.shape[0], CHUNK_ROWS):
                part = codes[first : first + CHUNK_ROWS]
                buffer = scratch[: part.shape[0]]
                np.copyto(buffer, part, casting="unsafe")  # int8 -> float32, no new allocation
                np.matmul(buffer, query, out=scores[first : first + part.shape[0]])
            scores *= scales
            take = min(k, scores.shape[0])
            pick = np.argpartition(-scores, take - 1)[:take]
            best_ids.append(np.asarray(ids[pick]))
            best_scores.append(scores[pick])
        ids_all, scores_all = np.concatenate(best_ids), np.concatenate(best_scores)
        order = np.argsort(-scores_all, kind="stable")[:k]
        return [(int(ids_all[i]), float(scores_all[i])) for i in order]

    def exact_top(self, store: Store, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Like :meth:`top`, re-scored with the stored float32 vectors (exact cosines)."""
        rough = self.top(query, k * RESCORE)
        if not rough:
            return []
        stored = store.vectors.for_observations(self.model, [i for i, _ in rough])
        query = np.asarray(query, dtype=np.float32)
        exact = []
        for obs_id, approx in rough:
            blob = stored.get(obs_id)
            if blob is None or len(blob) != 4 * self.dim:
                exact.append((obs_id, approx))
                continue
            exact.append((obs_id, float(np.frombuffer(blob, dtype="<f4") @ query)))
        exact.sort(key=lambda pair: (-pair[1], -pair[0]))
        return exact[:k]


def _private(path: Path, flags: int):
    """``path`` opened for binary writing, created 0600 (the data dir's files are private)."""
    return os.fdopen(os.open(path, flags | os.O_CREAT, 0o600), "wb")


def _identity(store: Store) -> int | None:
    """The database file's inode: a replaced database gets a new one, so its cache is unused."""
    try:
        return os.stat(store.path).st_ino
    except OSError:
        return None


def cache_dir_for(store: Store) -> Path | None:
    """Where the index cache of a file-backed store lives: beside its SQLite file. None for an
    in-memory store and for a team store on PostgreSQL (whose ``path`` is its printable URL,
    not a folder), whose processes keep their index in memory."""
    if store.backend != "sqlite" or store.path == ":memory:" or store.path.startswith("file:"):
        return None
    return Path(store.path + "-vectors")


# -- hybrid search ----------------------------------------------------------------------------


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
