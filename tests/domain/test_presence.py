"""One presence rule (:mod:`colony_tasks.domain.presence`) for briefings, ``sessions``, claims, work
items and the viewer: a session is idle — and what it holds stale — at the same moment."""

from __future__ import annotations

from pathlib import Path

from colony_tasks.base.kinds import Presence
from colony_tasks.domain import claims, presence, work
from colony_tasks.store import Store
from colony_tasks.usecases import actions
from colony_tasks.viewer import data
from tests.support.helpers import join

NOW = 1_800_000_000.0


def test_presence_of_a_session():
    quiet = NOW - presence.QUIET_AFTER - 1
    assert presence.of(None, "", NOW - 60, NOW) == Presence.ONLINE
    assert presence.of(None, "", quiet, NOW) == Presence.IDLE
    assert presence.of(None, presence.HUMAN, quiet, NOW) == Presence.WAITING
    assert presence.of(None, presence.cut_off("rate_limit"), NOW, NOW) == Presence.CUT_OFF
    assert presence.of(NOW - 5, "", NOW, NOW) == Presence.ENDED


def test_a_quiet_holder_is_idle_in_the_viewer_and_stale_in_claims_and_plans_at_once(
    store: Store, repo: Path, clock
):
    holder = join(store, "sess-a", "claude", repo).session
    join(store, "sess-b", "codex", repo)
    actions.claim(store, holder, ["api.py"])
    [item] = actions.plan_work(store, holder, [{"title": "api", "files": ["api.py"]}]).ids
    actions.take_work(store, holder, item)

    def seen() -> tuple[str, str, bool]:
        now = store.now()
        row = [c for c in claims.list_live(store) if c["session_id"] == holder.id][0]
        taken = work.is_stale(store.work_item(item), now)
        return data.presence(store.get_session(holder.id), now), row["state"], taken

    clock.advance(presence.QUIET_AFTER - 5)
    assert seen() == ("online", "live", False)
    clock.advance(10)
    assert seen() == ("idle", "stale", True)
