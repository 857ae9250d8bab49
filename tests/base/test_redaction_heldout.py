"""The held-out secret set (tests/support/secret_heldout.py): its catch rate, per family and per
storage channel. The set was written before the rules it measures; the figures are printed
(``pytest -s``) and the target asserted: at least 95% caught, no clean text changed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from colony_tasks.base import redact
from colony_tasks.store import Store
from colony_tasks.usecases import actions
from tests.support.helpers import join
from tests.support.secret_heldout import HELDOUT, HELDOUT_CLEAN


def test_every_entry_holds_its_secret():
    assert len(HELDOUT) >= 100
    assert all(secret in text for _, secret, text in HELDOUT)


def test_at_least_95_percent_of_the_held_out_secrets_are_caught_in_each_family():
    total: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    for family, secret, text in HELDOUT:
        total[family] += 1
        caught[family] += secret not in redact.redact(text)
    for family in total:
        print(f"{family}: {caught[family]}/{total[family]}")
    assert sum(caught.values()) / sum(total.values()) >= 0.95
    assert all(caught[f] / total[f] >= 0.8 for f in total), caught


def test_no_held_out_clean_text_is_changed():
    assert [text for text in HELDOUT_CLEAN if redact.redact(text) != text] == []


def test_a_held_out_secret_is_replaced_where_it_was_in_the_original_text():
    # what surrounds a secret in non-ASCII text comes through as written
    for _, secret, text in HELDOUT:
        cleaned = redact.redact(text)
        head = text[: text.index(secret)]
        prefix = head[: max(0, len(head) - 24)]
        assert cleaned.startswith(prefix), (text, cleaned)


def _store_by(channel: str, store: Store, text: str, i: int, task_id: int) -> None:
    if channel == "prompt":
        store.add_observation("prompt", text, session_id="a", task_id=task_id)
    elif channel == "command":
        store.add_observation(
            "command",
            f"ran:\n{text}",
            session_id="a",
            task_id=task_id,
            meta={"tool_input": {"command": text}, "output": [text]},
        )
    elif channel == "post":
        actions.post(store, "a", f"note {i}:\n{text}")
    else:
        # a prompt in between: the loop guard counts agent requests since human input
        store.add_observation("prompt", "go on", session_id="a", task_id=task_id)
        actions.ask(store, "a", f"question {i}:\n{text}", to="codex")


@pytest.mark.parametrize("channel", ["prompt", "command", "post", "ask"])
def test_held_out_secrets_stay_out_of_the_database_file_by_channel(
    channel: str, tmp_path: Path, repo: Path
):
    path = tmp_path / "heldout.db"
    store = Store(path)
    a = join(store, "a", "claude", repo)
    join(store, "b", "codex", repo)
    for i, (_, _, text) in enumerate(HELDOUT):
        _store_by(channel, store, text, i, a.task.id)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    blob = b"".join(p.read_bytes() for p in tmp_path.glob("heldout.db*"))
    leaked = [secret for _, secret, _ in HELDOUT if secret.encode() in blob]
    print(f"{channel}: {len(HELDOUT) - len(leaked)}/{len(HELDOUT)} kept out")
    assert (len(HELDOUT) - len(leaked)) / len(HELDOUT) >= 0.95, leaked
