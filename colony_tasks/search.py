"""Search over everything agents did and said.

User text never reaches FTS5 as syntax: it is split into word tokens, each quoted, so quotes,
parentheses, ``AND``, ``NEAR(``, ``-`` or unbalanced input can never raise. A trailing ``*`` on
a word keeps its prefix meaning. Standard library only.
"""

from __future__ import annotations

import re

from .errors import InvalidInput
from .models import record
from .store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

TOKEN = re.compile(r"\w+\*?", re.UNICODE)
STOPWORDS = frozenset(
    (
        "a an and are as at be by did do does for from had has have how i in is it its of on or"
        " that the this to was we were what when where which who why will with you"
    ).split()
)
SNIPPET_CHARS = 200


class Hit(record("Hit", "id kind author task_id created_at snippet score")):  # type: ignore[misc]
    """A compact search result; full records come from ``get_observations``."""

    __slots__ = ()


def fts_query(text: str) -> str | None:
    """An FTS5 expression for arbitrary user text, or None when it holds no word."""
    tokens = TOKEN.findall(text or "")
    words = [t for t in tokens if t.rstrip("*").lower() not in STOPWORDS] or tokens
    terms = []
    for word in dict.fromkeys(words):
        prefix = word.endswith("*")
        core = word.rstrip("*")
        if not core:
            continue
        terms.append(f'"{core}"*' if prefix else f'"{core}"')
    return " OR ".join(terms[:32]) if terms else None


def keyword_search(
    store: Store,
    query: str,
    *,
    limit: int = 20,
    task_id: int | None = None,
    kinds: Sequence[str] | None = None,
    session: str | None = None,
    since: float | None = None,
    until: float | None = None,
) -> list[Hit]:
    """bm25-ranked hits for ``query``; never raises on user text."""
    match = fts_query(query)
    if match is None or limit <= 0:
        return []
    rows = store.fts_search(
        match,
        limit=limit,
        task_id=task_id,
        kinds=kinds,
        session_id=session,
        since=since,
        until=until,
    )
    return [
        Hit(
            id=obs.id,
            kind=obs.kind,
            author=obs.handle,
            task_id=obs.task_id,
            created_at=obs.created_at,
            snippet=_clip(snippet or obs.text),
            score=score,
        )
        for obs, score, snippet in rows
    ]


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…"


class Searcher:
    """The one search entry point of every front end (CLI, MCP server, viewer).

    Hybrid (keywords fused with embeddings) once vectors exist, keywords alone before, or when
    ``semantic=False``. The engine, with its in-memory vector index, is built on the first
    hybrid search and kept, so a long-lived process loads vectors once.
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
        if semantic is not False and self.engine is None and self.store.has_vectors():
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
        # numpy and the embedder load here, only once vectors exist: keyword-only users and
        # short CLI commands never pay for them.
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
