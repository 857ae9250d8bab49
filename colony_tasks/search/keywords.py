"""Keyword search: FTS5 bm25 over observation text.

User text never reaches FTS5 as syntax: it is split into word tokens, each quoted, so quotes,
parentheses, ``AND``, ``NEAR(``, ``-`` or unbalanced input can never raise. A trailing ``*`` on
a word keeps its prefix meaning. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..store import Store
from .hits import Hit, clip

TOKEN = re.compile(r"\w+\*?", re.UNICODE)
STOPWORDS = frozenset(
    (
        "a an and are as at be by did do does for from had has have how i in is it its of on or"
        " that the this to was we were what when where which who why will with you"
    ).split()
)


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
            snippet=clip(snippet or obs.text),
            score=score,
        )
        for obs, score, snippet in rows
    ]
