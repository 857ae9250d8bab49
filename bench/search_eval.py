"""Relevance of keyword, semantic and hybrid search on a labelled agent history: MRR and recall.

The history (``bench/search_eval_data.py``: hand-written observations of three agents working
on a web app, plus generated routine traffic over the same files and words) is loaded into a
fresh temporary store. Vectors are backfilled per embedder with ``semantic.backfill``. Every
labelled query is then run through:

- ``fts``: ``search.keyword_search`` (bm25);
- ``semantic <embedder>``: ``VectorIndex.top`` over all vectors (cosine only);
- ``hybrid <embedder>``: ``SearchEngine.search`` (reciprocal-rank fusion of the two).

Reported per method: MRR@20 (reciprocal rank of the first relevant hit in the top 20, 0 when
none is there) and recall@5 (share of a query's relevant observations in the top 5), over all
queries and per query style (paraphrase, keyword, mixed).

A second part prototypes the fusion locally (RRF ``k``, candidate counts, the semantic weight,
a similarity floor for semantic candidates, and a score-based alternative); the local fusion at
the shipped parameters is checked to rank exactly as ``SearchEngine.search`` does. Parameters
are chosen with two-fold cross-validation over the queries, so the reported figure is measured
on queries the choice did not see.

``--busy`` runs the busy-store evaluation instead (``bench/search_eval_busy_data.py``): 104
paraphrased questions and 28 exact identifiers over needles spread through 0, 2,000 and 10,000
generated observations (``--sizes``); recall@5 and MRR per method and query style, then the
fusion grid chosen on half the queries and reported on the other half. ``--phrasings`` adds
each method searched through ``colony_tasks.search.find`` with several phrasings per query,
written by rule from the query alone (:func:`phrasings`), fused by reciprocal rank.

Run ``python bench/search_eval.py`` (``--embedders static,minilm``; a backend that cannot load
here is skipped with the reason, so minilm needs the ``[minilm]`` extra in this interpreter).
``--seeds 11,12,13`` repeats the headline figures on other generated histories (the filler and
where the hand-written items fall in it); ``--per-query`` prints every query's ranks;
``--json PATH`` writes the figures. Nothing is written by default.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import search_eval_busy_data as busy
from _stats import log, machine_info, machine_line, write_json
from search_eval_data import AGENTS, CORE, QUERIES, TASKS, filler

from colony_tasks.search import find, fts_query, keyword_search, semantic
from colony_tasks.search.embeddings import Embedder, EmbedderUnavailable, get_embedder
from colony_tasks.search.hits import FUSION, looks_like_identifier
from colony_tasks.search.hits import Fusion as Shipped
from colony_tasks.search.hits import fuse as shipped_fuse
from colony_tasks.store import Store

CUTOFF = 20  # MRR@CUTOFF; also the result limit every method is asked for
RECALL_AT = 5
N_FILLER = 1400
SEED = 11
STYLES = ("paraphrase", "keyword", "mixed")
BOOTSTRAP = 10_000

Ranker = Callable[[str], list[int]]


# -- the history ------------------------------------------------------------------------------


def history(n_filler: int, seed: int) -> list[tuple[str | None, str, str, str, str]]:
    """(key or None, kind, agent, task, text): the core, in order, spread through the filler."""
    noise = filler(n_filler, seed)
    total = len(noise) + len(CORE)
    slots = set(random.Random(seed).sample(range(total), len(CORE)))
    core, rest = iter(CORE), iter(noise)
    out: list[tuple[str | None, str, str, str, str]] = []
    for position in range(total):
        out.append(next(core) if position in slots else (None, *next(rest)))
    return out


def load_store(path: Path, n_filler: int, seed: int) -> tuple[Store, dict[str, int], list[str]]:
    """A new store at ``path`` holding the history: (store, key -> id, keys redaction changed)."""
    tick = itertools.count()
    t0 = time.time() - 30 * 24 * 3600
    store = Store(path, clock=lambda: t0 + 97.0 * next(tick))
    for session_id, handle, agent in AGENTS.values():
        store.insert_session(session_id, handle, agent, "/work/webapp", None, None)
    task_ids = {
        name: store.insert_task(title, created_by=AGENTS["cedar"][0])
        for name, title in TASKS.items()
    }
    keys: dict[str, int] = {}
    changed = []
    with store.transaction():
        for key, kind, agent, task, text in history(n_filler, seed):
            obs_id = store.add_observation(
                kind, text, session_id=AGENTS[agent][0], task_id=task_ids[task]
            )
            if key is not None:
                if key in keys:
                    raise ValueError(f"duplicate key {key!r} in CORE")
                keys[key] = obs_id
                stored = store.get_observation(obs_id)
                if stored is None or stored.text != text:
                    changed.append(key)
    missing = {k for _, _, wanted in QUERIES for k in wanted} - set(keys)
    if missing:
        raise ValueError(f"queries name unknown keys: {sorted(missing)}")
    return store, keys, changed


# -- metrics ----------------------------------------------------------------------------------


def first_rank(ranked: Sequence[int], relevant: set[int]) -> int | None:
    """1-based rank of the first relevant id within the cutoff, or None."""
    for rank, obs_id in enumerate(ranked[:CUTOFF], 1):
        if obs_id in relevant:
            return rank
    return None


@dataclass
class Score:
    mrr: float
    recall: float
    n: int


def score(ranks: Sequence[list[int]], relevant: Sequence[set[int]], pick: Sequence[int]) -> Score:
    if not pick:
        return Score(math.nan, math.nan, 0)
    rr = []
    rec = []
    for i in pick:
        rank = first_rank(ranks[i], relevant[i])
        rr.append(1.0 / rank if rank else 0.0)
        rec.append(len(set(ranks[i][:RECALL_AT]) & relevant[i]) / len(relevant[i]))
    return Score(sum(rr) / len(rr), sum(rec) / len(rec), len(pick))


def subsets() -> dict[str, list[int]]:
    out = {"all": list(range(len(QUERIES)))}
    for style in STYLES:
        out[style] = [i for i, (s, _, _) in enumerate(QUERIES) if s == style]
    return out


def run(ranker: Ranker) -> list[list[int]]:
    return [ranker(query)[:CUTOFF] for _, query, _ in QUERIES]


# -- the methods ------------------------------------------------------------------------------


def fts_ranker(store: Store) -> Ranker:
    return lambda q: [h.id for h in keyword_search(store, q, limit=CUTOFF)]


def semantic_ranker(store: Store, embedder: Embedder, index: semantic.VectorIndex) -> Ranker:
    def rank(query: str) -> list[int]:
        vector = embedder.embed([query])[0]
        return [i for i, _ in index.exact_top(store, vector, CUTOFF)] if np.any(vector) else []

    return rank


def hybrid_ranker(engine: semantic.SearchEngine) -> Ranker:
    return lambda q: [h.id for h in engine.search(q, limit=CUTOFF)]


# -- several phrasings, written by rule from the query alone -----------------------------------

QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how is are was were do does did can could should"
    " would will we our us you your i my me it its that this the a an to of for on in at by"
    " and or with".split()
)


def phrasings(query: str) -> list[str]:
    """The query, its content words, and the content words as a teammate's note would state
    them. Written by rule from the query's own words (nothing from the needles or the answers):
    a stand-in for the agent's rephrasings that can add no vocabulary, so a lower bound."""
    words = [w.strip("?,.!:;'\"") for w in query.split()]
    content = " ".join(w for w in words if w and w.lower() not in QUESTION_WORDS)
    out = [query]
    if content and content.lower() != query.lower():
        out += [content, f"decided: {content}"]
    return out


def phrased_ranker(searcher: Any) -> Ranker:
    """Rank with :func:`colony_tasks.search.find` over :func:`phrasings` of the query;
    ``searcher`` is anything with ``search(query, limit=, task_id=, kinds=, semantic=)``."""
    return lambda q: [
        h.id for h in find(searcher.store, phrasings(q), limit=CUTOFF, searcher=searcher)
    ]


class KeywordSearcher:
    """Keywords alone, in the shape :func:`colony_tasks.search.find` takes."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def search(self, query: str, *, limit: int, task_id=None, kinds=None, semantic=None):
        return keyword_search(self.store, query, limit=limit, task_id=task_id, kinds=kinds)


@dataclass
class Candidates:
    """Per query: keyword ids with bm25 scores, semantic ids with cosines (deep lists)."""

    keyword: list[list[tuple[int, float]]]
    nearest: list[list[tuple[int, float]]]


def candidates(store: Store, embedder: Embedder, index: semantic.VectorIndex) -> Candidates:
    keyword, nearest = [], []
    for _, query, _ in QUERIES:
        vector = embedder.embed([query])[0]  # one at a time, as SearchEngine does (batching
        # pads, which moves a transformer's vectors by rounding and can swap near-ties)
        keyword.append([(h.id, h.score) for h in keyword_search(store, query, limit=200)])
        nearest.append(index.exact_top(store, vector, 200) if np.any(vector) else [])
    return Candidates(keyword, nearest)


@dataclass(frozen=True)
class Fusion:
    """One fusion variant. ``rrf`` with the defaults below is what SearchEngine ships."""

    method: str = "rrf"  # or "cc": convex combination of min-max normalised scores
    k: int = FUSION.k
    kw_n: int = FUSION.keyword_depth
    sem_n: int = FUSION.semantic_depth
    w_sem: float = FUSION.semantic_weight / FUSION.keyword_weight  # (keyword weight is 1)
    floor: float | None = None  # drop semantic candidates below this cosine
    rel_floor: float | None = FUSION.relative_floor  # drop those below this share of the best

    def label(self) -> str:
        if self.method == "cc":
            parts = [f"cc w_sem={self.w_sem:g}", f"cands {self.kw_n}/{self.sem_n}"]
        else:
            parts = [f"rrf k={self.k}", f"cands {self.kw_n}/{self.sem_n}"]
            if self.w_sem != 1.0:
                parts.append(f"w_sem={self.w_sem:g}")
        if self.floor is not None:
            parts.append(f"floor={self.floor:g}")
        if self.rel_floor is not None:
            parts.append(f"rel_floor={self.rel_floor:g}")
        return ", ".join(parts)


def fuse(
    keyword: list[tuple[int, float]], nearest: list[tuple[int, float]], f: Fusion
) -> list[int]:
    kw = keyword[: f.kw_n]
    sem = nearest[: f.sem_n]
    if sem and f.floor is not None:
        sem = [(i, s) for i, s in sem if s >= f.floor]
    if sem and f.rel_floor is not None:
        best = sem[0][1]
        sem = [(i, s) for i, s in sem if best > 0 and s >= f.rel_floor * best]
    scores: dict[int, float] = {}
    if f.method == "rrf":
        for rank, (i, _) in enumerate(kw):
            scores[i] = scores.get(i, 0.0) + 1.0 / (f.k + rank + 1)
        for rank, (i, _) in enumerate(sem):
            scores[i] = scores.get(i, 0.0) + f.w_sem / (f.k + rank + 1)
    else:
        for items, weight, sign in ((kw, 1.0, -1.0), (sem, f.w_sem, 1.0)):
            if not items:
                continue
            values = [sign * s for _, s in items]  # bm25: lower is better
            low, high = min(values), max(values)
            span = (high - low) or 1.0
            for (i, _), v in zip(items, values, strict=True):
                scores[i] = scores.get(i, 0.0) + weight * (v - low) / span
    ranked = sorted(scores.items(), key=lambda pair: (-pair[1], -pair[0]))
    return [i for i, _ in ranked[:CUTOFF]]


def fused_ranks(c: Candidates, f: Fusion) -> list[list[int]]:
    return [fuse(kw, sem, f) for kw, sem in zip(c.keyword, c.nearest, strict=True)]


def grid() -> list[Fusion]:
    out = []
    for k, kw_n, sem_n, w_sem in itertools.product(
        (1, 5, 10, 20, 30, 60), (10, 20, 50), (5, 10, 20, 50), (0.25, 0.5, 0.75, 1.0, 1.5)
    ):
        out.append(Fusion(k=k, kw_n=kw_n, sem_n=sem_n, w_sem=w_sem))
    for base, rel in itertools.product(
        (Fusion(), Fusion(k=10), Fusion(k=10, sem_n=20)), (0.7, 0.8, 0.85, 0.9)
    ):
        out.append(Fusion(base.method, base.k, base.kw_n, base.sem_n, base.w_sem, None, rel))
    for base, floor in itertools.product(
        (Fusion(), Fusion(k=10), Fusion(k=10, sem_n=20)), (0.3, 0.4, 0.5, 0.6, 0.7)
    ):
        out.append(Fusion(base.method, base.k, base.kw_n, base.sem_n, base.w_sem, floor))
    for kw_n, sem_n, w_sem in itertools.product((20, 50), (20, 50), (0.25, 0.5, 0.75, 1.0, 1.5)):
        out.append(Fusion("cc", kw_n=kw_n, sem_n=sem_n, w_sem=w_sem))
    return out


def one_at_a_time() -> list[Fusion]:
    """The shipped fusion with one parameter changed at a time."""
    d = Fusion()
    return [
        d,
        *(Fusion(k=k) for k in (1, 5, 10, 20, 30)),
        *(Fusion(sem_n=n) for n in (5, 10, 20)),
        *(Fusion(kw_n=n) for n in (10, 20)),
        *(Fusion(w_sem=w) for w in (0.25, 0.5, 0.75, 1.5)),
        *(Fusion(rel_floor=r) for r in (0.8, 0.85, 0.9)),
        *(Fusion(floor=x) for x in (0.4, 0.5, 0.6)),
        Fusion("cc", w_sem=0.5),
        Fusion("cc", w_sem=1.0),
    ]


def cross_validate(
    c: Candidates, relevant: Sequence[set[int]], variants: Sequence[Fusion]
) -> tuple[float, list[Fusion]]:
    """Two-fold CV over the queries (interleaved, per style): mean held-out MRR, picks."""
    folds: list[list[int]] = [[], []]
    for style in STYLES:
        members = [i for i, (s, _, _) in enumerate(QUERIES) if s == style]
        for j, i in enumerate(members):
            folds[j % 2].append(i)
    all_ranks = {f: fused_ranks(c, f) for f in variants}
    total_rr, picks = 0.0, []
    for train, test in ((folds[0], folds[1]), (folds[1], folds[0])):
        best = max(
            variants, key=lambda f: (score(all_ranks[f], relevant, train).mrr, f == Fusion())
        )
        picks.append(best)
        total_rr += score(all_ranks[best], relevant, test).mrr * len(test)
    return total_rr / len(QUERIES), picks


# -- output -----------------------------------------------------------------------------------


def table(rows: list[tuple[str, dict[str, Score]]], columns: Sequence[str]) -> str:
    header = ["method"]
    for col in columns:
        n = next(iter(rows))[1][col].n if rows else 0
        header += [f"{col} ({n}) MRR", "R@5"]
    body = []
    for name, scores in rows:
        cells = [name]
        for col in columns:
            s = scores[col]
            cells += [f"{s.mrr:.3f}", f"{s.recall:.3f}"]
        body.append(cells)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return " | ".join(
            c.ljust(w) if j == 0 else c.rjust(w)
            for j, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join([line(header), "-+-".join("-" * w for w in widths), *map(line, body)])


def overlap(query: str, keys: Sequence[str], text_of: dict[str, str]) -> float:
    """Share of the query's FTS terms found (as words) in its best-matching relevant text."""
    terms = [t.strip('"*').lower() for t in (fts_query(query) or "").split(" OR ")]
    if not terms:
        return 0.0
    best = 0.0
    for key in keys:
        words = {w.lower() for w in _WORD.findall(text_of[key])}
        best = max(best, sum(t in words for t in terms) / len(terms))
    return best


_WORD = re.compile(r"\w+")


def fmt_rank(rank: int | None) -> str:
    return str(rank) if rank else "-"


# -- the busy store ---------------------------------------------------------------------------

BUSY_SIZES = (0, 2_000, 10_000)


def busy_queries() -> list[tuple[str, str, str]]:
    """(style, query, needle key): every paraphrase, then every exact identifier."""
    out = [("paraphrase", query, key) for key, _, _, _, query in busy.NEEDLES]
    out += [("identifier", query, key) for query, key in busy.IDENTIFIER_QUERIES]
    return out


def load_busy(path: Path, distractors: int, seed: int) -> tuple[Store, dict[str, int]]:
    """A store holding the needles spread through ``distractors`` haystack observations."""
    tick = itertools.count()
    t0 = time.time() - 60 * 24 * 3600
    store = Store(path, clock=lambda: t0 + 31.0 * next(tick))
    for session_id, handle, agent in busy.AGENTS.values():
        store.insert_session(session_id, handle, agent, "/work/webapp", None, None)
    task_id = store.insert_task("webapp main (lane task)", created_by=busy.AGENTS["ash"][0])
    noise = busy.haystack(distractors, seed)
    total = len(noise) + len(busy.NEEDLES)
    slots = set(random.Random(seed).sample(range(total), len(busy.NEEDLES)))
    needles, rest = iter(busy.NEEDLES), iter(noise)
    keys: dict[str, int] = {}
    with store.transaction():
        for position in range(total):
            if position in slots:
                key, kind, agent, text, _ = next(needles)
            else:
                key, (kind, agent, text) = None, next(rest)
            obs_id = store.add_observation(
                kind, text, session_id=busy.AGENTS[agent][0], task_id=task_id
            )
            if key is not None:
                keys[key] = obs_id
    return store, keys


@dataclass
class BusyRun:
    """One busy store: per-method scores and, per embedder, deep candidate lists for tuning."""

    scores: dict[str, dict[str, Score]]
    relevant: list[set[int]]
    keyword: list[list[int]]
    nearest: dict[str, list[list[tuple[int, float]]]]
    identifier: list[bool]


BUSY_STYLES = ("paraphrase", "identifier")


def busy_styles(queries: Sequence[tuple[str, str, str]], pick: Sequence[int] | None = None):
    chosen = range(len(queries)) if pick is None else pick
    return {s: [i for i in chosen if queries[i][0] == s] for s in BUSY_STYLES}


def evaluate_busy(
    embedders: dict[str, Embedder], sizes: Sequence[int], seed: int, *, phrased: bool = False
) -> dict[int, BusyRun]:
    """size -> the scores of every method, and candidates for the fusion tuning."""
    queries = busy_queries()
    styles = busy_styles(queries)
    deep = Shipped(keyword_depth=200, semantic_depth=200, relative_floor=0.0, min_cosine=-1.0)
    out: dict[int, BusyRun] = {}
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="colony-search-busy-") as workdir:
            store, keys = load_busy(Path(workdir) / "busy.db", size, seed)
            try:
                relevant = [{keys[key]} for _, _, key in queries]

                def measure(ranker: Ranker, relevant=relevant) -> dict[str, Score]:
                    ranks = [ranker(q)[:CUTOFF] for _, q, _ in queries]
                    return {s: score(ranks, relevant, pick) for s, pick in styles.items()}

                methods = {"keyword": measure(fts_ranker(store))}
                if phrased:
                    methods["keyword +phrasings"] = measure(phrased_ranker(KeywordSearcher(store)))
                keyword = [
                    [h.id for h in keyword_search(store, q, limit=200)] for _, q, _ in queries
                ]
                nearest: dict[str, list[list[tuple[int, float]]]] = {}
                for name, embedder in embedders.items():
                    started = time.perf_counter()
                    semantic.backfill(store, embedder)
                    seconds = time.perf_counter() - started
                    log(f"  {size:>6} distractors: backfill {name} {seconds:.1f}s")
                    engine = semantic.SearchEngine(store, embedder, cache=False)
                    deep_engine = semantic.SearchEngine(store, embedder, fusion=deep, cache=False)
                    lists = [deep_engine.nearest(q) or [] for _, q, _ in queries]
                    nearest[name] = lists
                    by_query = {
                        q: [i for i, _ in near]
                        for (_, q, _), near in zip(queries, lists, strict=True)
                    }
                    methods[f"semantic {name}"] = measure(by_query.__getitem__)
                    methods[f"hybrid {name}"] = measure(hybrid_ranker(engine))
                    if phrased:
                        methods[f"hybrid {name} +phrasings"] = measure(phrased_ranker(engine))
                shapes = [looks_like_identifier(q) for _, q, _ in queries]
                out[size] = BusyRun(methods, relevant, keyword, nearest, shapes)
            finally:
                store.close()
    return out


def busy_grid() -> list[Shipped]:
    out = []
    for k, kd, sd, kw, rel, floor, ident in itertools.product(
        (5, 20, 60),
        (20, 50),
        (10, 20, 50),
        (0.5, 0.75, 1.0, 1.5),
        (0.0, 0.7, 0.8),
        (-1.0, 0.3, 0.45),
        (1.0, 3.0, 10.0),
    ):
        out.append(Shipped(k, kd, sd, kw, 1.0, floor, rel, ident))
    return out


def busy_fused(run: BusyRun, name: str, f: Shipped) -> list[list[int]]:
    return [
        [i for i, _ in shipped_fuse(kw, near, f, identifier=shape)[:CUTOFF]]
        for kw, near, shape in zip(run.keyword, run.nearest[name], run.identifier, strict=True)
    ]


def busy_objective(runs: Sequence[BusyRun], name: str, f: Shipped, pick: Sequence[int]) -> float:
    """Paraphrase recall@5 + MRR averaged over stores; -1 if identifiers lose to keywords."""
    styles = busy_styles(busy_queries(), pick)
    total = 0.0
    for run in runs:
        ranks = busy_fused(run, name, f)
        ident = score(ranks, run.relevant, styles["identifier"])
        keyword = score([kw[:CUTOFF] for kw in run.keyword], run.relevant, styles["identifier"])
        if ident.recall < keyword.recall or ident.mrr < keyword.mrr - 0.02:
            return -1.0
        para = score(ranks, run.relevant, styles["paraphrase"])
        total += para.recall + para.mrr
    return total / len(runs)


def busy_tuning(results: dict[int, BusyRun], names: Sequence[str]) -> dict[str, Any]:
    """Choose the fusion on half the queries of the busiest stores, report the other half."""
    queries = busy_queries()
    halves = [list(range(0, len(queries), 2)), list(range(1, len(queries), 2))]
    busiest = [results[s] for s in sorted(results) if s >= 2_000] or list(results.values())
    variants = busy_grid()
    report: dict[str, Any] = {}
    tune, held = halves

    def joint(f: Shipped) -> float:
        values = [busy_objective(busiest, name, f, tune) for name in names]
        return -1.0 if min(values) < 0 else sum(values) / len(values)

    # One fusion ships for every embedder: chosen on the tuning half for all of them at once.
    best = max(variants, key=lambda f: (joint(f), f == FUSION))
    for name in names:
        log("")
        log(f"{name}: fusion chosen on half the queries (2k and 10k, all embedders): {best}")
        rows = []
        for size, run in results.items():
            for label, f in (("shipped", FUSION), ("chosen", best)):
                for part, pick in (("tune", tune), ("held-out", held)):
                    styles = busy_styles(queries, pick)
                    ranks = busy_fused(run, name, f)
                    para = score(ranks, run.relevant, styles["paraphrase"])
                    ident = score(ranks, run.relevant, styles["identifier"])
                    rows.append((size, label, part, para, ident))
        log("distractors | fusion  | half     | paraphrase R@5   MRR | identifier R@5   MRR")
        for size, label, part, para, ident in rows:
            log(
                f"{size:>11,} | {label:<7} | {part:<8} | {para.recall:14.3f} {para.mrr:5.3f} |"
                f" {ident.recall:14.3f} {ident.mrr:5.3f}"
            )
        report[name] = {
            "chosen": vars(best),
            "rows": [
                {"size": s, "fusion": lab, "half": h, "paraphrase": vars(p), "identifier": vars(i)}
                for s, lab, h, p, i in rows
            ],
        }
    return report


def busy_table(results: dict[int, BusyRun]) -> str:
    lines = []
    header = f"{'method':<30} | distractors | paraphrase R@5   MRR | identifier R@5   MRR"
    lines.append(header)
    lines.append("-" * len(header))
    methods = list(next(iter(results.values())).scores)
    for method in methods:
        for size, run in results.items():
            p, i = run.scores[method]["paraphrase"], run.scores[method]["identifier"]
            lines.append(
                f"{method:<30} | {size:>11,} | {p.recall:14.3f} {p.mrr:5.3f} |"
                f" {i.recall:14.3f} {i.mrr:5.3f}"
            )
    return "\n".join(lines)


def busy_main(args: argparse.Namespace) -> int:
    info = machine_info()
    log("search relevance in a busy store")
    log(f"machine: {machine_line(info)}")
    names = [n.strip() for n in args.embedders.split(",") if n.strip()]
    embedders, skipped = load_embedders(names)
    for name, reason in skipped.items():
        log(f"  skipping embedder {name!r}: {reason}")
    queries = busy_queries()
    n_para = sum(1 for q in queries if q[0] == "paraphrase")
    log(
        f"{len(busy.NEEDLES)} needles; {n_para} paraphrase and {len(queries) - n_para}"
        f" identifier queries; distractors {', '.join(f'{s:,}' for s in args.sizes)}"
    )
    results = evaluate_busy(embedders, args.sizes, args.seeds[0], phrased=args.phrasings)
    log("")
    log(f"recall@{RECALL_AT} and MRR@{CUTOFF} per method, distractor count and query style")
    log(busy_table(results))
    tuning = {} if args.no_tuning else busy_tuning(results, list(embedders))
    if args.json:
        write_json(
            args.json,
            {
                "benchmark": "search_eval_busy",
                "machine": info,
                "skipped": skipped,
                "results": {
                    size: {m: {s: vars(x) for s, x in by.items()} for m, by in run.scores.items()}
                    for size, run in results.items()
                },
                "tuning": tuning,
            },
        )
        log(f"results written to {args.json}")
    return 0


# -- main -------------------------------------------------------------------------------------


def load_embedders(names: Sequence[str]) -> tuple[dict[str, Embedder], dict[str, str]]:
    loaded, skipped = {}, {}
    # Keep transformers' load report and progress bars out of the tables (minilm only).
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for name in names:
        try:
            embedder = get_embedder(name)
        except EmbedderUnavailable as error:
            skipped[name] = str(error)
            continue
        except Exception as error:  # a broken optional install must not stop the others
            skipped[name] = f"{type(error).__name__}: {error}"
            continue
        if embedder is None:
            skipped[name] = "the 'none' backend has no vectors"
            continue
        loaded[name] = embedder
    return loaded, skipped


@dataclass
class Evaluation:
    """Everything measured on one generated history."""

    seed: int
    observations: int
    relevant: list[set[int]]
    ranks: dict[str, list[list[int]]]
    cands: dict[str, Candidates]
    backfill_seconds: dict[str, float]
    redacted: list[str]


def evaluate(embedders: dict[str, Embedder], n_filler: int, seed: int) -> Evaluation:
    """Load one history into a temporary store and rank every query with every method."""
    with tempfile.TemporaryDirectory(prefix="colony-search-eval-") as workdir:
        store, keys, redacted = load_store(Path(workdir) / "eval.db", n_filler, seed)
        try:
            relevant = [{keys[k] for k in wanted} for _, _, wanted in QUERIES]
            ranks: dict[str, list[list[int]]] = {"fts": run(fts_ranker(store))}
            cands: dict[str, Candidates] = {}
            timings: dict[str, float] = {}
            for name, embedder in embedders.items():
                started = time.perf_counter()
                semantic.backfill(store, embedder)
                timings[name] = time.perf_counter() - started
                index = semantic.VectorIndex(embedder.model_id, embedder.dim)
                index.refresh(store)
                ranks[f"semantic {name}"] = run(semantic_ranker(store, embedder, index))
                shipped = run(hybrid_ranker(semantic.SearchEngine(store, embedder)))
                ranks[f"hybrid {name}"] = shipped
                cands[name] = candidates(store, embedder, index)
                local = [
                    [i for i, _ in shipped_fuse([i for i, _ in kw], near, FUSION, identifier=ident)]
                    for kw, near, ident in zip(
                        cands[name].keyword,
                        cands[name].nearest,
                        (looks_like_identifier(q) for _, q, _ in QUERIES),
                        strict=True,
                    )
                ]
                local = [r[:CUTOFF] for r in local]
                pairs = enumerate(zip(local, shipped, strict=True))
                differ = [QUERIES[i][1] for i, (a, b) in pairs if a != b]
                if differ:
                    raise AssertionError(f"local fusion differs from SearchEngine: {differ[:3]}")
            n_obs = store.count_observations()
            return Evaluation(seed, n_obs, relevant, ranks, cands, timings, redacted)
        finally:
            store.close()


def reciprocal_ranks(ranks: list[list[int]], relevant: Sequence[set[int]]) -> np.ndarray:
    found = (first_rank(r, rel) for r, rel in zip(ranks, relevant, strict=True))
    return np.array([1.0 / f if f else 0.0 for f in found])


def verdict_lines(ev: Evaluation, embedders: Sequence[str]) -> list[str]:
    """Hybrid against fts on MRR, with a paired bootstrap interval over the queries."""
    fts = reciprocal_ranks(ev.ranks["fts"], ev.relevant)
    rng = np.random.default_rng(0)
    draws = rng.integers(0, len(fts), size=(BOOTSTRAP, len(fts)))
    lines = []
    for name in embedders:
        hybrid = reciprocal_ranks(ev.ranks[f"hybrid {name}"], ev.relevant)
        diff = hybrid - fts
        low, high = np.percentile(diff[draws].mean(axis=1), [2.5, 97.5])
        word = "BEATS" if diff.mean() > 0 else "does NOT beat"
        lines.append(
            f"hybrid {name} {word} fts on MRR: {hybrid.mean():.3f} vs {fts.mean():.3f}"
            f" (difference {diff.mean():+.3f}, 95% paired bootstrap interval over the queries"
            f" {low:+.3f} to {high:+.3f})"
        )
    return lines


def per_query_report(ev: Evaluation, name: str) -> list[str]:
    """Where the shipped hybrid ranks the first relevant hit better or worse than fts."""
    hybrid, sem, fts = ev.ranks[f"hybrid {name}"], ev.ranks[f"semantic {name}"], ev.ranks["fts"]
    wins, losses = [], []
    for i, (style, query, _) in enumerate(QUERIES):
        f_rank = first_rank(fts[i], ev.relevant[i])
        s_rank = first_rank(sem[i], ev.relevant[i])
        h_rank = first_rank(hybrid[i], ev.relevant[i])
        delta = (1 / h_rank if h_rank else 0.0) - (1 / f_rank if f_rank else 0.0)
        row = (delta, f_rank, s_rank, h_rank, style, query)
        if delta > 0:
            wins.append(row)
        elif delta < 0:
            losses.append(row)
    net = sum(r[0] for r in wins + losses) / len(QUERIES)
    lines = [
        f"hybrid {name} vs fts, per query: {len(wins)} better, {len(losses)} worse,"
        f" {len(QUERIES) - len(wins) - len(losses)} same (net MRR {net:+.3f})",
        "  rank of the first relevant hit: fts / semantic / hybrid",
    ]
    by_delta = lambda row: row[0]  # noqa: E731
    worse, better = sorted(losses, key=by_delta), sorted(wins, key=by_delta, reverse=True)
    for title, rows in (("worse", worse), ("better", better)):
        lines.append(f"  {title}:")
        for delta, f_rank, s_rank, h_rank, style, query in rows:
            lines.append(
                f"    {delta:+.2f}  {fmt_rank(f_rank):>2} / {fmt_rank(s_rank):>2} /"
                f" {fmt_rank(h_rank):>2}  [{style}] {query}"
            )
    return lines


# Fusion changes worth checking on every seed: each is a one-line change in semantic.py.
SUMMARY_VARIANTS = (
    Fusion(k=10),
    Fusion(sem_n=10),
    Fusion(rel_floor=None),
    Fusion(rel_floor=0.85),
    Fusion(k=10, rel_floor=0.8),
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", default="static,minilm", help="comma-separated backends")
    parser.add_argument("--filler", type=int, default=N_FILLER, help="generated observations")
    parser.add_argument(
        "--seeds",
        default=str(SEED),
        help="comma-separated history seeds; the first is reported in detail, all in a summary",
    )
    parser.add_argument("--per-query", action="store_true", help="print every query's ranks")
    parser.add_argument("--no-tuning", action="store_true", help="skip the fusion prototypes")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--busy", action="store_true", help="the busy-store evaluation (needles in a haystack)"
    )
    parser.add_argument(
        "--phrasings",
        action="store_true",
        help="--busy: also search several phrasings per query, written by rule (phrasings())",
    )
    parser.add_argument(
        "--sizes",
        default=",".join(map(str, BUSY_SIZES)),
        help="--busy: comma-separated distractor counts",
    )
    args = parser.parse_args(argv)
    args.seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.busy:
        return busy_main(args)
    info = machine_info()
    log("search relevance evaluation")
    log(f"machine: {machine_line(info)}")
    names = [n.strip() for n in args.embedders.split(",") if n.strip()]
    embedders, skipped = load_embedders(names)
    for name, reason in skipped.items():
        log(f"  skipping embedder {name!r}: {reason}")
    groups = subsets()
    columns = ("all", *STYLES)
    text_of = {key: text for key, _, _, _, text in CORE}

    ev = evaluate(embedders, args.filler, args.seeds[0])
    log(
        f"history (seed {ev.seed}): {ev.observations:,} observations ({len(CORE)} hand-written,"
        f" {args.filler:,} generated); {len(QUERIES)} queries"
        f" ({', '.join(f'{len(groups[s])} {s}' for s in STYLES)})"
    )
    if ev.redacted:
        log(
            f"  note: redaction rewrote {len(ev.redacted)} hand-written texts; they are searched"
            f" as stored: {', '.join(ev.redacted)}"
        )
    for name, seconds in ev.backfill_seconds.items():
        log(f"  backfill with {embedders[name].model_id}: {seconds:.1f}s")
    scores = {
        method: {g: score(r, ev.relevant, groups[g]) for g in columns}
        for method, r in ev.ranks.items()
    }
    log("")
    log(f"MRR@{CUTOFF} and recall@{RECALL_AT}, by query style (number of queries)")
    log(table(list(scores.items()), columns))
    verdicts = verdict_lines(ev, list(embedders))
    for line in verdicts:
        log(line)
    for name in embedders:
        log("")
        for line in per_query_report(ev, name):
            log(line)

    if args.per_query:
        log("")
        log("per query: rank of the first relevant hit per method; ovl = query-term overlap")
        methods = list(ev.ranks)
        log("  " + " ".join(f"{m[:10]:>10}" for m in methods) + "   ovl  query")
        for i, (style, query, wanted) in enumerate(QUERIES):
            cells = " ".join(
                f"{fmt_rank(first_rank(ev.ranks[m][i], ev.relevant[i])):>10}" for m in methods
            )
            log(f"  {cells}  {overlap(query, wanted, text_of):4.2f}  [{style}] {query}")

    tuning: dict[str, Any] = {}
    if not args.no_tuning and embedders:
        variants = grid()
        family = one_at_a_time()
        log("")
        log(
            f"fusion prototypes: {len(family)} single changes and a grid of {len(variants)}"
            " (RRF k, keyword/semantic candidate counts, semantic weight, absolute and relative"
            " cosine floors, convex combination of normalised scores)"
        )
        for name in embedders:
            c = ev.cands[name]
            log("")
            log(
                f"{name}: one change at a time from the shipped fusion (without its identifier weight)"
            )
            trial = [
                (f.label(), {g: score(fused_ranks(c, f), ev.relevant, groups[g]) for g in columns})
                for f in family
            ]
            log(table(trial, columns))
            ranked = sorted(
                variants, key=lambda f: -score(fused_ranks(c, f), ev.relevant, groups["all"]).mrr
            )
            best = [
                (f.label(), {g: score(fused_ranks(c, f), ev.relevant, groups[g]) for g in columns})
                for f in ranked[:5]
            ]
            log(f"{name}: best 5 of the grid on all queries (in-sample, so optimistic)")
            log(table(best, columns))
            cv_family, picks_family = cross_validate(c, ev.relevant, family)
            cv_grid, picks_grid = cross_validate(c, ev.relevant, variants)
            shipped = scores[f"hybrid {name}"]["all"].mrr
            log(
                f"{name}: two-fold cross-validated MRR (choose on half the queries, measure on the"
                f" other half): single changes {cv_family:.3f}"
                f" (picks: {' | '.join(p.label() for p in picks_family)});"
                f" grid {cv_grid:.3f} (picks: {' | '.join(p.label() for p in picks_grid)});"
                f" shipped {shipped:.3f}, fts {scores['fts']['all'].mrr:.3f}"
            )
            tuning[name] = {
                "single_changes": {lab: {g: vars(s) for g, s in sc.items()} for lab, sc in trial},
                "grid_best": [lab for lab, _ in best],
                "cv_single_changes": cv_family,
                "cv_single_changes_picks": [p.label() for p in picks_family],
                "cv_grid": cv_grid,
                "cv_grid_picks": [p.label() for p in picks_grid],
            }

    per_seed: dict[int, dict[str, float]] = {}
    if len(args.seeds) > 1:
        for seed in args.seeds:
            other = ev if seed == ev.seed else evaluate(embedders, args.filler, seed)
            row = {m: score(r, other.relevant, groups["all"]).mrr for m, r in other.ranks.items()}
            for name in embedders:
                for f in SUMMARY_VARIANTS:
                    ranks = fused_ranks(other.cands[name], f)
                    row[f"hybrid {name}, {f.label()}"] = score(
                        ranks, other.relevant, groups["all"]
                    ).mrr
            per_seed[seed] = row
        log("")
        log(f"MRR@{CUTOFF} over all queries on {len(args.seeds)} generated histories (seeds)")
        methods = list(per_seed[args.seeds[0]])
        width = max(len(m) for m in methods)
        log(f"{'method':<{width}} | " + " | ".join(f"{s:>6}" for s in args.seeds) + " |   mean")
        for m in methods:
            values = [per_seed[s][m] for s in args.seeds]
            cells = " | ".join(f"{v:6.3f}" for v in values)
            log(f"{m:<{width}} | {cells} | {sum(values) / len(values):6.3f}")

    if args.json:
        write_json(
            args.json,
            {
                "benchmark": "search_eval",
                "machine": info,
                "observations": ev.observations,
                "queries": len(QUERIES),
                "skipped": skipped,
                "backfill_seconds": ev.backfill_seconds,
                "results": {m: {g: vars(s) for g, s in sc.items()} for m, sc in scores.items()},
                "verdicts": verdicts,
                "tuning": tuning,
                "per_seed_mrr": per_seed,
            },
        )
        log(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
