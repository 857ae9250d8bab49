from __future__ import annotations

import multiprocessing
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colony_tasks.search import semantic
from colony_tasks.search.embeddings import get_embedder
from colony_tasks.store import Store
from tests.support.fakes import FakeEmbedder

HISTORY = [
    ("decision", "Retry policy: exponential backoff with jitter, max 5 attempts"),
    ("prompt", "fix the flaky login test in the auth middleware"),
    ("note", "the viewer stylesheet breaks on narrow screens"),
    ("decision", "we agreed to use SQLite WAL mode so readers never block writers"),
    ("edit", "src/auth/middleware.py (Edit)"),
]


def seed(store: Store) -> list[int]:
    return [store.add_observation(kind, text, task_id=1) for kind, text in HISTORY]


def test_backfill_embeds_each_row_once_and_reuses_identical_text(store: Store):
    ids = seed(store)
    store.add_observation("note", HISTORY[0][1], task_id=1)  # same text again
    fake = FakeEmbedder()
    assert semantic.backfill(store, fake, batch=2) == len(ids) + 1
    assert sorted(fake.calls) == sorted(t for _, t in HISTORY)  # the duplicate was not embedded
    assert semantic.backfill(store, fake) == 0
    assert store.vectors.counts() == {"fake-64": len(ids) + 1}


def test_switching_the_model_re_embeds_without_mixing_vectors(store: Store):
    seed(store)
    semantic.backfill(store, FakeEmbedder("fake-a", 32))
    other = FakeEmbedder("fake-b", 48)
    assert semantic.backfill(store, other) == len(HISTORY)
    assert store.vectors.counts() == {"fake-a": len(HISTORY), "fake-b": len(HISTORY)}
    index = semantic.VectorIndex("fake-b", 48)
    index.refresh(store)
    assert len(index) == len(HISTORY) and index.segments[0][2].shape == (len(HISTORY), 48)


def test_vectors_are_little_endian_float32_blobs_with_model_and_hash(store: Store):
    (first, *_) = seed(store)
    semantic.backfill(store, FakeEmbedder())
    row = store.conn.execute(
        "SELECT model, dim, content_hash, vector FROM vectors WHERE observation_id = ?", (first,)
    ).fetchone()
    assert row["model"] == "fake-64" and row["dim"] == 64
    assert row["content_hash"] == semantic.content_hash(HISTORY[0][1])
    expected = FakeEmbedder().embed([HISTORY[0][1]])[0]
    assert np.array_equal(np.frombuffer(row["vector"], dtype="<f4"), expected)


def test_index_extends_incrementally(store: Store):
    seed(store)
    fake = FakeEmbedder()
    semantic.backfill(store, fake)
    index = semantic.VectorIndex(fake.model_id, fake.dim)
    assert index.refresh(store) == len(HISTORY)
    new = store.add_observation("note", "brand new words here", task_id=1)
    semantic.backfill(store, fake)
    assert index.refresh(store) == 1 and index.refresh(store) == 0
    assert index.top(fake.embed(["brand new words here"])[0], 1)[0][0] == new


def test_search_is_keyword_only_until_vectors_exist_then_hybrid(store: Store):
    seed(store)
    engine = semantic.SearchEngine(store, FakeEmbedder())
    before = engine.search("readers block writers")
    assert [h.kind for h in before][:1] == ["decision"] and before[0].score < 0  # bm25 score
    semantic.backfill(store, engine.embedder)
    after = engine.search("readers block writers")
    assert after[0].id == before[0].id and after[0].score > 0  # fused RRF score
    assert engine.search("readers block writers", semantic=False)[0].score < 0


def test_hybrid_finds_a_paraphrase_keywords_miss(store: Store):
    seed(store)
    engine = semantic.SearchEngine(store, get_embedder("static"))
    semantic.backfill(store, engine.embedder)
    query = "css layout on mobile phones"
    assert engine.search(query, semantic=False) == []
    hits = engine.search(query)
    assert hits[0].snippet == HISTORY[2][1]


def test_filters_apply_to_semantic_candidates(store: Store):
    seed(store)
    store.add_observation("note", "retry backoff jitter attempts", task_id=2)
    engine = semantic.SearchEngine(store, FakeEmbedder())
    semantic.backfill(store, engine.embedder)
    assert {h.task_id for h in engine.search("retry backoff", task_id=2)} == {2}
    assert {h.kind for h in engine.search("retry backoff", kinds=["decision"])} == {"decision"}


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=120))
def test_hybrid_search_never_raises(store: Store, query: str):
    if store.count_observations() == 0:
        seed(store)
        semantic.backfill(store, FakeEmbedder())
    engine = semantic.SearchEngine(store, FakeEmbedder())
    assert len(engine.search(query, limit=5)) <= 5


def _backfill_worker(path: str, log: str, barrier) -> None:
    store = Store(path)
    barrier.wait()
    semantic.backfill(store, FakeEmbedder(log=log), batch=16)
    store.close()


def test_two_backfill_processes_embed_each_row_once(tmp_path: Path):
    path = str(tmp_path / "two.db")
    store = Store(path)
    for i in range(400):
        store.add_observation("note", f"observation number {i} about topic {i % 7}", task_id=1)
    store.close()
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    logs = [str(tmp_path / f"log{n}.txt") for n in range(2)]
    procs = [ctx.Process(target=_backfill_worker, args=(path, log, barrier)) for log in logs]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    embedded = [
        line for log in logs if Path(log).exists() for line in Path(log).read_text().splitlines()
    ]
    assert len(embedded) == 400 and len(set(embedded)) == 400
    assert Store(path).vectors.counts() == {"fake-64": 400}


def test_static_backend_embeds_stores_and_retrieves(store: Store):
    seed(store)
    embedder = get_embedder("static")
    assert semantic.backfill(store, embedder) == len(HISTORY)
    index = semantic.VectorIndex(embedder.model_id, embedder.dim)
    index.refresh(store)
    (best, _), *_ = index.top(embedder.embed(["SQLite WAL readers writers"])[0], 1)
    assert store.get_observation(best).text == HISTORY[3][1]


@pytest.mark.parametrize("backend", ["minilm", "minilm-torch"])
def test_minilm_backends_embed_store_and_retrieve(store: Store, backend: str):
    if backend == "minilm-torch":
        pytest.importorskip("sentence_transformers", reason="the [minilm] extra is not installed")
    seed(store)
    embedder = get_embedder(backend)
    assert semantic.backfill(store, embedder) == len(HISTORY)
    engine = semantic.SearchEngine(store, embedder)
    assert (
        "Retry policy"
        in engine.search("how many times do we try again after a network error")[0].snippet
    )


def test_hook_process_never_imports_numpy_or_models(home: Path, repo: Path):
    code = (
        "import io, json, sys\n"
        "from colony_tasks.hooks import runner\n"
        f"payload = {{'session_id': 's', 'cwd': {str(repo)!r}, 'prompt': 'hi'}}\n"
        "for event in ['session-start', 'user-prompt-submit', 'pre-tool-use', 'post-tool-use', 'stop']:\n"
        "    sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode()))\n"
        "    runner.run([event])\n"
        "heavy = {'numpy', 'model2vec', 'sentence_transformers', 'torch', 'tokenizers', 'click', 'pydantic', 'mcp'}\n"
        "print(json.dumps(sorted(heavy & {m.split('.')[0] for m in sys.modules})), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stderr.strip().splitlines()[-1] == "[]"


def test_searcher_is_keyword_only_until_vectors_exist_and_forcing_semantic_says_why(store: Store):
    from colony_tasks.base.errors import InvalidInput
    from colony_tasks.search import Searcher

    seed(store)
    searcher = Searcher(store)
    assert searcher.search("readers block writers")[0].score < 0  # bm25: keywords only
    assert searcher.engine is None  # numpy and the model were not needed
    with pytest.raises(InvalidInput, match="run `colony-tasks embed` first"):
        searcher.search("readers block writers", semantic=True)
    semantic.backfill(store, get_embedder())  # the default model, which the searcher uses
    hits = searcher.search("css layout on mobile phones")
    assert hits[0].id == store.timeline(1, kinds=["note"])[0].id and hits[0].score > 0
    assert searcher.search("css layout on mobile phones", semantic=False) == []


def test_a_new_process_maps_the_index_cache_and_reads_only_newer_vectors(store: Store):
    seed(store)
    fake = FakeEmbedder()
    semantic.backfill(store, fake)
    cache = semantic.cache_dir_for(store)
    assert cache is not None and (cache / f"{fake.model_id}.json").is_file()  # warmed by backfill
    later = semantic.VectorIndex(fake.model_id, fake.dim, cache)
    assert later.refresh(store) == 0 and len(later) == len(HISTORY)  # all from the cache
    assert isinstance(later.segments[0][2], np.memmap)
    new = store.add_observation("note", "brand new words here", task_id=1)
    semantic.backfill(store, fake)
    third = semantic.VectorIndex(fake.model_id, fake.dim, cache)
    assert third.refresh(store) == 0 and len(third) == len(HISTORY) + 1
    assert third.exact_top(store, fake.embed(["brand new words here"])[0], 1)[0][0] == new


def test_the_cache_of_a_replaced_database_is_ignored(tmp_path: Path):
    fake = FakeEmbedder()
    first = Store(tmp_path / "colony.db")
    seed(first)
    semantic.backfill(first, fake)
    first.close()
    (tmp_path / "colony.db").unlink()
    second = Store(tmp_path / "colony.db")
    try:
        only = second.add_observation("note", "a single other note", task_id=1)
        semantic.backfill(second, fake)
        index = semantic.VectorIndex(fake.model_id, fake.dim, semantic.cache_dir_for(second))
        index.refresh(second)
        assert len(index) == 1
        assert index.exact_top(second, fake.embed(["a single other note"])[0], 5)[0][0] == only
        rebuilt = semantic.VectorIndex(fake.model_id, fake.dim, semantic.cache_dir_for(second))
        assert rebuilt.refresh(second) == 0 and len(rebuilt) == 1  # the cache was started anew
    finally:
        second.close()


def test_quantised_scores_are_re_scored_to_exact_cosines(store: Store):
    seed(store)
    fake = FakeEmbedder()
    semantic.backfill(store, fake)
    index = semantic.VectorIndex(fake.model_id, fake.dim)
    index.refresh(store)
    query = fake.embed(["readers block writers"])[0]
    exact = fake.embed([text for _, text in HISTORY]) @ query
    top = index.exact_top(store, query, 3)
    assert [round(score, 5) for _, score in top] == [
        round(float(s), 5) for s in sorted(exact, reverse=True)[:3]
    ]


def test_exact_identifiers_stay_first_in_hybrid_search(store: Store):
    seed(store)
    target = store.add_observation("note", "raised client_max_body_size to 20m", task_id=1)
    engine = semantic.SearchEngine(store, get_embedder("static"))
    semantic.backfill(store, engine.embedder)
    assert engine.search("client_max_body_size")[0].id == target


def test_a_fresh_hit_not_yet_embedded_is_not_ranked_below_older_embedded_ones(store: Store):
    """A prompt that matches every query word ranks first before the worker embeds it."""
    embedder = get_embedder()
    older = [
        store.add_observation("note", "the login retry loop hangs when the token expires"),
        store.add_observation("note", "login page retry button does nothing"),
        store.add_observation("note", "auth token refresh is flaky on slow networks"),
    ]
    assert semantic.backfill(store, embedder) == len(older)
    engine = semantic.SearchEngine(store, embedder, cache=False)
    engine.search("warm the index up")
    fresh = store.add_observation("prompt", "why does the login retry forget the auth token")
    assert store.vectors.for_observations(embedder.model_id, [fresh]) == {}  # not embedded yet
    hits = engine.search("login retry token")
    assert hits[0].id == fresh, [(h.id, h.snippet) for h in hits]
    assert (
        store.vectors.for_observations(embedder.model_id, [fresh]) == {}
    )  # a search writes nothing
    semantic.backfill(store, embedder)
    after = engine.search("login retry token")  # the same ranking once the worker embedded it
    assert [(h.id, h.score) for h in after] == [(h.id, h.score) for h in hits]


def test_during_an_upgrade_search_uses_the_old_vectors_until_the_new_ones_are_complete(
    store: Store,
):
    from colony_tasks.search import Searcher
    from colony_tasks.search.embeddings import MODEL_IDS

    seed(store)
    semantic.backfill(store, get_embedder("static"))  # as the previous default left the store
    searcher = Searcher(store)
    searcher.RECHECK_SECONDS = 0.0
    query = "css layout on mobile phones"  # no shared word: keywords alone find nothing
    assert searcher.search(query, semantic=False) == []
    assert searcher.search(query)[0].snippet == HISTORY[2][1]  # found through the static vectors
    assert searcher.interim and searcher.engine.embedder.model_id == MODEL_IDS["static"]
    semantic.backfill(store, get_embedder(), limit=2)  # re-embedding under way
    assert searcher.search(query)[0].snippet == HISTORY[2][1]
    assert searcher.engine.embedder.model_id == MODEL_IDS["static"]
    semantic.backfill(store, get_embedder())  # done: the static vectors are dropped
    assert store.vectors.counts() == {MODEL_IDS["minilm"]: len(HISTORY)}
    assert searcher.search(query)[0].snippet == HISTORY[2][1]
    assert not searcher.interim and searcher.engine.embedder.model_id == MODEL_IDS["minilm"]


def test_an_interim_engine_is_kept_warm_while_the_upgrade_runs(store: Store):
    from colony_tasks.search import Searcher

    seed(store)
    semantic.backfill(store, get_embedder("static"))
    searcher = Searcher(store)
    searcher.RECHECK_SECONDS = 0.0
    searcher.search("retry policy")
    first = searcher.engine
    assert searcher.interim and first is not None
    searcher.search("retry policy")
    assert searcher.engine is first  # re-checked, same choice: the same warm engine
