"""Search over everything agents did and said: the one entry point of every front end.

:class:`Searcher` answers with keywords alone (:mod:`colony_tasks.keywords`, standard library)
until vectors exist, and with hybrid search (:mod:`colony_tasks.semantic`, numpy and a model)
after. The import graph runs one way: ``hits`` <- ``keywords`` <- ``semantic`` <- ``search``.
"""

from __future__ import annotations

from .errors import InvalidInput
from .hits import Hit
from .keywords import STOPWORDS, fts_query, keyword_search
from .store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["STOPWORDS", "Hit", "Searcher", "fts_query", "keyword_search"]


class Searcher:
    """The one search entry point of every front end (CLI, MCP server, viewer).

    Hybrid (keywords fused with embeddings) once vectors exist, keywords alone before, or when
    ``semantic=False``. The engine is built on the first hybrid search and kept, so a
    long-lived process keeps its index warm; a short one maps the on-disk index cache.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = None
        self.unavailable: str | None = None  # why hybrid search fell back to keywords

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        task_id: int | None = None,
        kinds: Sequence[str] | None = None,
        semantic: bool | None = None,
    ) -> list[Hit]:
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
            embedder = semantic.configured_embedder()
        except EmbedderUnavailable as error:
            if required:
                raise
            self.unavailable = f"Semantic search unavailable ({error}); using keywords."
            return None
        return semantic.SearchEngine(self.store, embedder)
