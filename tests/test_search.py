from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colony_tasks import search
from colony_tasks.store import Store

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
    from colony_tasks.hits import looks_like_identifier

    for query in ("verify_token", "deploy/nginx.conf", "X-RateLimit-Remaining", "QueuePool"):
        assert looks_like_identifier(query), query
    for query in ("where do we cap upload sizes", "the end-of-month job crashes", ""):
        assert not looks_like_identifier(query), query
