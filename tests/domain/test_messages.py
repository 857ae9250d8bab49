"""The write primitive every message goes through (:mod:`colony_tasks.domain.messages`): its text,
who it reaches, and the loop guard that stops agents asking each other forever."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony_tasks.base.errors import Conflict, InvalidInput, NotFound
from colony_tasks.domain import messages, sessions
from colony_tasks.store import Store
from colony_tasks.usecases import actions
from tests.support.helpers import join

pytestmark = pytest.mark.both_backends


def test_text_is_stripped_redacted_and_bounded():
    assert messages.check_text("  hi  ", "note") == "hi"
    assert "AKIAIOSFODNN7EXAMPLE" not in messages.check_text("key AKIAIOSFODNN7EXAMPLE", "note")
    with pytest.raises(InvalidInput, match="non-empty"):
        messages.check_text("   ", "note")
    with pytest.raises(InvalidInput, match="limit is 16000"):
        messages.check_text("x" * (messages.MAX_MESSAGE_CHARS + 1), "note")


def test_recipients_by_handle_kind_or_anyone(store: Store, repo: Path):
    a = join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo).session
    c = join(store, "c", "codex", repo).session
    task, me = a.task, a.session
    assert messages.resolve_recipients(store, task, me, "any") == (None, [b, c])
    assert messages.resolve_recipients(store, task, me, "codex") == ("codex", [b, c])
    assert messages.resolve_recipients(store, task, me, b.handle) == (b.handle, [b])
    with pytest.raises(NotFound, match="No active claude session"):
        messages.resolve_recipients(store, task, me, "claude")
    with pytest.raises(InvalidInput, match="own author"):
        messages.resolve_recipients(store, task, me, me.handle)
    sessions.end_session(store, store.get_session("c"))
    with pytest.raises(Conflict, match="has ended"):
        messages.resolve_recipients(store, task, me, c.handle)


def test_the_loop_guard_stops_the_ninth_agent_request_until_a_human_speaks(
    store: Store, repo: Path
):
    join(store, "a", "claude", repo)
    b = join(store, "b", "codex", repo).session
    human = sessions.human_session(store, "dana", str(repo))
    for i in range(8):
        actions.ask(store, "a", f"q{i}?", to=b.handle)
    with pytest.raises(messages.LoopGuard):
        actions.ask(store, "a", "q8?", to=b.handle)
    task_id = store.open_lane_task(b.lane_id).id
    assert store.timeline(task_id, limit=1)[-1].kind == "guard"  # the refusal is posted
    actions.post(store, human, "carry on")
    assert actions.ask(store, "a", "q8?", to=b.handle).id
