"""Search results and how ranked lists are fused: shared by keyword and hybrid search.

Standard library only, so the keyword path stays light.
:func:`fuse` is the one fusion rule; ``bench/search_eval.py --busy`` tunes :data:`FUSION` on
held-out queries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..base.models import Record
from ..base.text import clip as text_clip

SNIPPET_CHARS = 200


class Hit(Record):
    """A compact search result; full records come from ``get_observations``."""

    id: int
    kind: str
    author: str | None
    task_id: int | None
    created_at: float
    snippet: str
    score: float


def clip(text: str, limit: int = SNIPPET_CHARS) -> str:
    """A snippet: :func:`colony_tasks.base.text.clip` (one line, fenced) at the snippet length."""
    return text_clip(text, limit)


@dataclass(frozen=True)
class Fusion:
    """How a keyword list (bm25) and a semantic list (cosine) become one ranking.

    Weighted reciprocal-rank fusion over the first ``keyword_depth`` / ``semantic_depth``
    candidates. Semantic candidates below ``min_cosine``, or below ``relative_floor`` times the
    best cosine, are dropped before fusing: weak neighbours otherwise sit at middling ranks and
    push a keyword match down. A query that names an identifier (a file, a function, a setting,
    an error code: see :func:`looks_like_identifier`) weighs its keyword list
    ``identifier_weight`` times more, so the exact match stays on top. Ties go to the newer
    observation (the larger id).
    """

    k: int = 60
    keyword_depth: int = 50
    semantic_depth: int = 50
    keyword_weight: float = 1.0
    semantic_weight: float = 1.0
    min_cosine: float = -1.0
    relative_floor: float = 0.8
    identifier_weight: float = 1.0


# Chosen on half the queries of both evaluations at once (``bench/search_eval.py --busy`` at 2k
# and 10k distractors, and the 83-query history), for the static and the MiniLM embedder, and
# checked on the other half: a short RRF constant so a first place counts, keywords at 0.75
# weight unless the query names an identifier (then 3x), 20 keyword candidates.
FUSION = Fusion(
    k=5,
    keyword_depth=20,
    semantic_depth=50,
    keyword_weight=0.75,
    relative_floor=0.7,
    identifier_weight=3.0,
)


# snake_case, dotted.names, paths/with/slashes, Header-Names, CamelCase, words with digits
# (plain hyphenated prose such as "end-of-month" is not an identifier).
IDENTIFIER = re.compile(r"\w[_./]\w|-[A-Z]|[a-z][A-Z]|[A-Z]{2,}[a-z]|[A-Za-z]\d|\d[A-Za-z]")


def looks_like_identifier(query: str) -> bool:
    """Whether ``query`` holds a token shaped like code: ``verify_token``, ``nginx.conf``."""
    return any(IDENTIFIER.search(token) for token in (query or "").split())


def rrf(*rankings: Sequence[int], k: int = 60) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion of ranked id lists, best first."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores.items(), key=lambda pair: (-pair[1], -pair[0]))


def fuse(
    keyword: Sequence[int],
    nearest: Sequence[tuple[int, float]],
    fusion: Fusion = FUSION,
    *,
    identifier: bool = False,
) -> list[tuple[int, float]]:
    """(id, fused score) best first, from keyword ids (best first) and (id, cosine) pairs.

    ``identifier``: the query names an identifier (:func:`looks_like_identifier`).
    """
    semantic = list(nearest[: fusion.semantic_depth])
    if semantic:
        best = semantic[0][1]
        floor = max(fusion.min_cosine, fusion.relative_floor * best if best > 0 else 0.0)
        semantic = [(i, s) for i, s in semantic if s >= floor]
    scores: dict[int, float] = {}
    weight = fusion.keyword_weight * (fusion.identifier_weight if identifier else 1.0)
    for rank, item in enumerate(keyword[: fusion.keyword_depth]):
        scores[item] = scores.get(item, 0.0) + weight / (fusion.k + rank + 1)
    for rank, (item, _) in enumerate(semantic):
        scores[item] = scores.get(item, 0.0) + fusion.semantic_weight / (fusion.k + rank + 1)
    return sorted(scores.items(), key=lambda pair: (-pair[1], -pair[0]))
