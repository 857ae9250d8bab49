"""Search over everything agents did and said: the one entry point of every front end.

:class:`Searcher` answers with keywords alone (:mod:`colony_tasks.search.keywords`, standard library)
until vectors exist, and with hybrid search (:mod:`colony_tasks.search.semantic`, numpy and a model)
after. The import graph runs one way: ``hits`` <- ``keywords`` <- ``semantic`` <- ``search``.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Sequence
from typing import NamedTuple

from ..base.errors import InvalidInput
from ..base.kinds import ObsKind
from ..store import Store
from .hits import Hit, rrf
from .keywords import STOPWORDS, fts_query, keyword_search

__all__ = [
    "MAX_PHRASINGS",
    "STOPWORDS",
    "Hit",
    "HitContext",
    "Searcher",
    "find",
    "fts_query",
    "hit_context",
    "keyword_search",
    "searcher_for",
]

MAX_PHRASINGS = 5
# Reciprocal-rank fusion of the phrasings' lists: the textbook constant, not tuned on any eval.
PHRASING_K = 60
# Candidates taken from each phrasing before fusing (a hit ranked low by one phrasing and high
# by another must be seen by both).
PHRASING_DEPTH = 20
FILE_KINDS = (ObsKind.CLAIM, ObsKind.RELEASE, ObsKind.EDIT)


class Searcher:
    """The one search entry point of every front end (CLI, MCP server, viewer).

    Hybrid (keywords fused with embeddings) once vectors exist, keywords alone before, or when
    ``semantic=False``. The engine is built on the first hybrid search and kept, so a
    long-lived process keeps its index warm; a short one maps the on-disk index cache.
    """

    # While an upgrade re-embeds, how often (seconds) to look whether the new model is ready.
    RECHECK_SECONDS = 30.0

    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = None
        self.unavailable: str | None = None  # why hybrid search fell back to keywords
        self.interim = False  # searching with a superseded model's vectors during an upgrade
        self._checked = 0.0

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        task_id: int | None = None,
        kinds: Sequence[str] | None = None,
        semantic: bool | None = None,
    ) -> list[Hit]:
        if semantic is not False and self.interim and self._due():
            # Look again: the new model's vectors may be complete now (the engine is kept
            # while the choice stands, with its warm index).
            self.engine = self._engine(required=False) or self.engine
        if semantic is not False and self.engine is None and self.store.vectors.any():
            self.engine = self._engine(required=bool(semantic))
        if semantic and self.engine is None:
            raise InvalidInput(
                self.unavailable or "No vectors yet: run `colony-tasks embed` first."
            )
        if semantic is False or self.engine is None:
            return keyword_search(self.store, query, limit=limit, task_id=task_id, kinds=kinds)
        return self.engine.search(
            query, limit=limit, task_id=task_id, kinds=kinds, semantic=semantic
        )

    def _engine(self, *, required: bool):
        # Deferred for weight, not for a cycle (semantic never imports this module): numpy and
        # the embedder load only once vectors exist, so keyword-only users never pay for them.
        from . import semantic
        from .embeddings import EmbedderUnavailable

        try:
            embedder, self.interim = semantic.search_embedder(self.store)
        except EmbedderUnavailable as error:
            if required:
                raise
            self.unavailable = f"Semantic search unavailable ({error}); using keywords."
            return None
        self._checked = time.monotonic()
        if (
            self.engine is not None
            and embedder is not None
            and self.engine.embedder is not None
            and self.engine.embedder.model_id == embedder.model_id
        ):
            return self.engine
        return semantic.SearchEngine(self.store, embedder)

    def _due(self) -> bool:
        return time.monotonic() - self._checked >= self.RECHECK_SECONDS


_SEARCHERS: weakref.WeakKeyDictionary[Store, Searcher] = weakref.WeakKeyDictionary()


def searcher_for(store: Store) -> Searcher:
    """The process's :class:`Searcher` of an open store, made on first use and kept while the
    store is open: a long-lived process (the MCP server, a relay) keeps its index and model
    warm across calls. The embedder itself is loaded once per process and shared."""
    searcher = _SEARCHERS.get(store)
    if searcher is None:
        searcher = _SEARCHERS[store] = Searcher(store)
    return searcher


def find(
    store: Store,
    queries: Sequence[str],
    *,
    limit: int = 20,
    task_id: int | None = None,
    kinds: Sequence[str] | None = None,
    semantic: bool | None = None,
    searcher: Searcher | None = None,
) -> list[Hit]:
    """Search ``store`` for one or several phrasings of one question, best hit first.

    Each phrasing is searched on its own (hybrid when vectors exist), then the lists are fused
    by reciprocal rank (:data:`PHRASING_K`), so a hit that several phrasings find rises and one
    phrasing's miss costs little. A hit's ``score`` is its fused score (a single phrasing keeps
    its own). Blank and repeated phrasings are ignored (none left: no hits); more than :data:`MAX_PHRASINGS` is
    refused. ``searcher`` defaults to the store's process-wide one (:func:`searcher_for`).
    """
    phrasings = list(dict.fromkeys(q.strip() for q in queries if q and q.strip()))
    if not phrasings:
        return []
    if len(phrasings) > MAX_PHRASINGS:
        raise InvalidInput(f"At most {MAX_PHRASINGS} phrasings per search, not {len(phrasings)}.")
    searcher = searcher or searcher_for(store)

    def one(query: str, depth: int) -> list[Hit]:
        return searcher.search(query, limit=depth, task_id=task_id, kinds=kinds, semantic=semantic)

    if len(phrasings) == 1:
        return one(phrasings[0], limit)
    lists = [one(q, max(limit, PHRASING_DEPTH)) for q in phrasings]
    by_id: dict[int, Hit] = {}
    for hits in lists:
        for hit in hits:
            by_id.setdefault(hit.id, hit)
    fused = rrf(*([h.id for h in hits] for hits in lists), k=PHRASING_K)[:limit]
    return [by_id[i]._replace(score=round(score, 6)) for i, score in fused]


class HitContext(NamedTuple):
    """What a front end needs to say where a hit leads: its task's title and, for a claim,
    release or edit, the files it names."""

    task_title: str | None
    paths: tuple[str, ...]


def hit_context(store: Store, hits: Sequence[Hit]) -> dict[int, HitContext]:
    """Hit id -> its :class:`HitContext` (one read of the hits' records and their tasks)."""
    records = {o.id: o for o in store.get_observations([h.id for h in hits])}
    titles: dict[int, str | None] = {}
    out = {}
    for hit in hits:
        if hit.task_id is not None and hit.task_id not in titles:
            task = store.get_task(hit.task_id)
            titles[hit.task_id] = task.title if task else None
        record = records.get(hit.id)
        paths: tuple[str, ...] = ()
        if record is not None and record.kind in FILE_KINDS:
            named = record.meta.get("paths") if isinstance(record.meta, dict) else None
            if isinstance(named, list):
                paths = tuple(str(p) for p in named)
            elif record.kind == ObsKind.EDIT:  # "a.py, b.py (Edit)": see events.record_edit
                paths = tuple(p for p in record.text.rsplit(" (", 1)[0].split(", ") if p)
        out[hit.id] = HitContext(titles.get(hit.task_id) if hit.task_id else None, paths)
    return out
