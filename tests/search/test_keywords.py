"""Keyword queries (:mod:`colony_tasks.search.keywords`): any user text becomes a safe FTS5 expression."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from colony_tasks.search.keywords import fts_query, keyword_search
from colony_tasks.store import Store
from colony_tasks.usecases import actions
from tests.support.helpers import join


def test_words_are_quoted_stopwords_dropped_and_prefixes_kept():
    assert fts_query("the retry policy for uploads*") == '"retry" OR "policy" OR "uploads"*'
    assert fts_query("the and of") == '"the" OR "and" OR "of"'  # only stopwords: keep them
    assert fts_query('DROP TABLE x; -- "quoted" NEAR(a b)') is not None
    assert fts_query("  ,.;  ") is None


def test_a_query_keeps_at_most_32_distinct_terms():
    query = fts_query(" ".join(f"w{i} w{i}" for i in range(50)))
    assert query is not None and query.count(" OR ") == 31


@given(st.text(max_size=200))
def test_any_text_is_a_query_sqlite_accepts(text: str):
    query = fts_query(text)
    if query is not None:
        import sqlite3

        db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
        db.execute("SELECT * FROM t WHERE t MATCH ?", (query,)).fetchall()


def test_keyword_search_finds_a_posted_note(store: Store, repo: Path):
    join(store, "a", "claude", repo)
    posted = actions.post(store, "a", "raise client_max_body_size in nginx.conf")
    actions.post(store, "a", "unrelated chatter about lunch")
    hits = keyword_search(store, "nginx body size")
    assert [h.id for h in hits][:1] == [posted.id]
