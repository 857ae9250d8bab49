from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colony_tasks import search
from colony_tasks.store import Store

# One set of tests, two stores: SQLite and a real PostgreSQL server (tests/conftest.py).
pytestmark = pytest.mark.both_backends

FIXTURE = [
    ("prompt", "fix the flaky login test in auth middleware"),
    ("decision", "Retry policy: exponential backoff with jitter, max 5 attempts"),
    ("edit", "edited src/api/routes.py to add pagination"),
    ("note", "the viewer.ts rendering is slow on large threads"),
    ("question", "should the retry budget be shared across workers?"),
    ("command", "pytest -q tests/test_auth.py"),
]


def seed(store: Store) -> dict[str, int]:
    return {text: store.add_observation(kind, text, task_id=1) for kind, text in FIXTURE}


def test_obvious_match_ranks_first(store: Store):
    ids = seed(store)
    hits = search.keyword_search(store, "retry policy backoff")
    assert hits[0].id == ids[FIXTURE[1][1]]
    hits = search.keyword_search(store, "auth middleware login")
    assert hits[0].id == ids[FIXTURE[0][1]]


def test_natural_language_question_finds_decision(store: Store):
    ids = seed(store)
    hits = search.keyword_search(store, "where did we decide the retry policy?")
    assert hits[0].id == ids[FIXTURE[1][1]]


def test_stemming_and_prefix(store: Store):
    ids = seed(store)
    assert search.keyword_search(store, "rendered")[0].id == ids[FIXTURE[3][1]]
    assert search.keyword_search(store, "middle*")[0].id == ids[FIXTURE[0][1]]


def test_filters_by_kind_task_and_session(store: Store):
    seed(store)
    other = store.add_observation("note", "retry in another task", task_id=2, session_id="s2")
    assert {h.kind for h in search.keyword_search(store, "retry", kinds=["question"])} == {
        "question"
    }
    assert [h.id for h in search.keyword_search(store, "retry", task_id=2)] == [other]
    assert [h.id for h in search.keyword_search(store, "retry", session="s2")] == [other]


def test_fts_syntax_in_user_text_is_searched_as_words(store: Store):
    seed(store)
    for query in ['"unbalanced', "auth AND (", "NEAR(retry", "-retry", "*", "a:b", "retry OR"]:
        search.keyword_search(store, query)
    assert search.keyword_search(store, "NEAR(retry policy")[0].kind == "decision"
    assert search.keyword_search(store, "   ") == []


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=200))
def test_search_never_raises_on_arbitrary_text(store: Store, query: str):
    if store.count_observations() == 0:
        seed(store)
    hits = search.keyword_search(store, query, limit=5)
    assert len(hits) <= 5


def test_common_words_are_ranked_within_the_newest_rows_first(store: Store):
    old = store.add_observation("note", "retry retry retry the cache", task_id=1)
    newer = [store.add_observation("note", f"retry the cache {i}", task_id=1) for i in range(6)]
    hits = store.fts_search('"retry" OR "cache"', limit=3, window=4)
    assert {obs.id for obs, _, _ in hits} <= set(newer[-4:])  # enough matches among the newest
    assert all("[retry]" in snippet and "[cache]" in snippet for _, _, snippet in hits)
    everything = store.fts_search('"retry" OR "cache"', limit=3, window=None)
    assert everything[0][0].id == old  # ranking everything puts the densest match first


def test_selective_words_outside_the_window_are_still_found(store: Store):
    old = store.add_observation("note", "client_max_body_size is 20m", task_id=1)
    for i in range(6):
        store.add_observation("note", f"routine note {i}", task_id=1)
    hits = store.fts_search('"client_max_body_size"', limit=3, window=2)
    assert [obs.id for obs, _, _ in hits] == [old]


def test_identifier_shaped_queries_are_told_apart_from_prose():
    from colony_tasks.search.hits import looks_like_identifier

    for query in ("verify_token", "deploy/nginx.conf", "X-RateLimit-Remaining", "QueuePool"):
        assert looks_like_identifier(query), query
    for query in ("where do we cap upload sizes", "the end-of-month job crashes", ""):
        assert not looks_like_identifier(query), query


# -- several phrasings, and where a hit leads ------------------------------------------------


def test_one_phrasing_is_exactly_the_searchers_own_ranking(store: Store):
    seed(store)
    searcher = search.Searcher(store)
    assert search.find(store, ["retry policy"], searcher=searcher) == searcher.search(
        "retry policy"
    )
    assert search.find(store, ["   ", ""]) == []


def test_a_hit_that_several_phrasings_find_rises_above_one_that_only_one_finds(store: Store):
    ids = seed(store)
    retry_decision, retry_question = ids[FIXTURE[1][1]], ids[FIXTURE[4][1]]
    alone = search.find(store, ["retry budget"])
    assert alone[0].id == retry_question  # "budget" is only in the question
    fused = search.find(store, ["retry budget", "exponential backoff", "retry jitter attempts"])
    assert fused[0].id == retry_decision  # two of three phrasings find the decision
    assert {h.id for h in fused} >= {retry_decision, retry_question}
    assert fused[0].score > fused[1].score > 0  # fused reciprocal-rank scores


def test_repeated_phrasings_count_once_and_too_many_are_refused(store: Store):
    import pytest

    from colony_tasks.base.errors import InvalidInput

    seed(store)
    assert search.find(store, ["retry budget", " retry budget "]) == search.find(
        store, ["retry budget"]
    )
    with pytest.raises(InvalidInput, match="At most 5 phrasings"):
        search.find(store, [f"q{i}" for i in range(6)])


def test_a_store_keeps_one_searcher_per_process(store: Store):
    assert search.searcher_for(store) is search.searcher_for(store)
    other = Store(":memory:")
    try:
        assert search.searcher_for(other) is not search.searcher_for(store)
    finally:
        other.close()


def test_hit_context_names_the_task_and_the_files_of_claims_and_edits(store: Store):
    task_id = store.insert_task("Make retries sane")
    note = store.add_observation("note", "retry notes", task_id=task_id)
    edit = store.add_observation("edit", "src/a.py, lib/b.py (Edit)", task_id=task_id)
    claim = store.add_observation("claim", "claimed", task_id=task_id, meta={"paths": ["src/c.py"]})
    untasked = store.add_observation("note", "no task")
    hits = [
        search.Hit(o.id, o.kind, o.handle, o.task_id, o.created_at, o.text, 0.0)
        for o in store.get_observations([note, edit, claim, untasked])
    ]
    context = search.hit_context(store, hits)
    title = "Make retries sane"
    assert context[note] == search.HitContext(title, ())
    assert context[edit] == search.HitContext(title, ("src/a.py", "lib/b.py"))
    assert context[claim] == search.HitContext(title, ("src/c.py",))
    assert context[untasked] == search.HitContext(None, ())
