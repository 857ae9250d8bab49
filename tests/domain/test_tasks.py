"""Tasks (:mod:`colony_tasks.domain.tasks`): a task's summary of decisions and open blockers."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony_tasks.store import Store
from colony_tasks.usecases import actions
from tests.support.helpers import join

# One set of tests, two stores: SQLite and a real PostgreSQL server (tests/conftest.py).
pytestmark = pytest.mark.both_backends


def test_decisions_and_open_blockers_appear_in_the_summary(store: Store, repo: Path):
    a = join(store, "a", "claude", repo)
    join(store, "b", "codex", repo)
    d = actions.record_decision(store, "a", "Use SQLite WAL", rationale="many readers")
    blk = actions.report_blocker(store, "b", "CI is red", waiting_on="a")
    s = actions.show_task(store, a.task.id)
    assert [o.id for o in s["decisions"]] == [d.id]
    assert "Rationale: many readers" in s["decisions"][0].text
    assert [o.id for o in s["blockers"]] == [blk.id]
    actions.resolve_blocker(store, "a", blk.id)
    assert actions.show_task(store, a.task.id)["blockers"] == []
