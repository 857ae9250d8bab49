"""The warm vector index of semantic search: int8 codes of one model's vectors, extended as
vectors are stored, scored in chunks, re-scored exactly; and its on-disk cache beside the
database, shared by the processes of one store.

Never on the hook path (numpy). :mod:`colony_tasks.search.semantic` keeps one per search engine.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no shared cache, an in-memory index only
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from ..store import Store

CHUNK_ROWS = 1_024  # rows converted to float32 per step: a 1 MiB scratch (stays in L2) at dim 256
RESCORE = 4  # approximate candidates re-scored exactly per wanted result


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
