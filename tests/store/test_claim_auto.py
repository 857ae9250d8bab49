"""An automatic claim (the one an edit makes) is a flag on the claim, not a note to compare:
claims made before the flag existed are flagged by their note when the store upgrades, and
the flag follows the claim as it is renewed."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony_tasks.domain import claims
from colony_tasks.store import Store
from colony_tasks.store.schema import MIGRATIONS
from colony_tasks.usecases import actions
from tests.support.helpers import join

BEFORE_THE_FLAG = [m for m in MIGRATIONS if m.version < 17]
CLAIMS = (("src/a.py", claims.AUTO_NOTE), ("src/b.py", "retry policy"))
FLAGGED = [("src/a.py", claims.AUTO_NOTE, 1), ("src/b.py", "retry policy", 0)]


def add_claims(store: Store) -> None:
    with store.transaction():
        for pattern, note in CLAIMS:
            store._run(
                "INSERT INTO claims(session_id, repo_id, pattern, note, created_at, renewed_at,"
                " expires_at) VALUES ('s', 'r', ?, ?, 0, 0, 1e12)",
                (pattern, note),
            )


def flagged(store: Store) -> list[tuple[str, str, int]]:
    rows = store._all("SELECT pattern, note, auto FROM claims ORDER BY pattern")
    return [(r["pattern"], r["note"], r["auto"]) for r in rows]


def test_claims_an_edit_made_before_the_flag_are_flagged_by_their_note_on_upgrade(tmp_path: Path):
    path = tmp_path / "colony.db"
    old = Store(path, migrations=BEFORE_THE_FLAG)
    add_claims(old)
    old.close()
    new = Store(path)
    try:
        assert flagged(new) == FLAGGED
    finally:
        new.close()


@pytest.mark.postgres
def test_a_team_store_flags_them_too_and_its_claims_guard_keeps_its_search_path(pg_server):
    from colony_tasks.store.pg import PgStore
    from colony_tasks.store.pg_schema import MIGRATIONS as PG_MIGRATIONS

    saved, pg_server.template = pg_server.template, None  # a blank database, not the template
    try:
        url = pg_server.create_database("claim_auto_upgrade")
    finally:
        pg_server.template = saved
    old = PgStore(url, migrations=[m for m in PG_MIGRATIONS if m.name != "claim_auto"])
    add_claims(old)
    old.close()
    new = PgStore(url)
    try:
        assert flagged(new) == FLAGGED
        guard = new._one(
            "SELECT prosrc, proconfig FROM pg_proc WHERE proname = 'colony_guard_claims'"
        )
        assert "OLD.auto" in guard[0] and guard[1] == ["search_path=public, pg_temp"]
    finally:
        new.close()


@pytest.mark.both_backends
def test_the_flag_follows_a_claim_as_an_edit_or_its_holder_renews_it(store: Store, repo: Path):
    me = join(store, "a", "claude", repo).session
    lane = claims.session_lane(store, me)

    def flag() -> object:
        (row,) = store.list_claims(session_id="a")
        return row["auto"]

    claims.claim_edited(store, me, ["src/api.py"], lane, None)
    assert flag() is True
    actions.claim(store, "a", ["src/api.py"])  # no note: the claim stays what it was
    assert flag() is True
    actions.claim(store, "a", ["src/api.py"], note="mine until the release")
    assert flag() is False
    claims.claim_edited(store, me, ["src/api.py"], lane, None)
    assert flag() is True
