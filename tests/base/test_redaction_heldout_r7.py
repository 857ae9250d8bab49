"""Issue 37's sets: the held-out secrets (tests/base/redaction_heldout_r7.py, written before the
rules they measure) and the development set the rules were tuned on
(tests/base/redaction_dev_r7.py), each with clean look-alikes. The catch rates are printed per
family (``pytest -s``) and floors asserted; no look-alike may change."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from colony_tasks.base import redact
from colony_tasks.domain import presence
from colony_tasks.store import Store
from tests.base.redaction_dev_r7 import DEV, DEV_LOOKALIKES
from tests.base.redaction_heldout_r7 import HELDOUT_R7, HELDOUT_R7_CLEAN
from tests.base.test_redaction_heldout import _store_by
from tests.support.helpers import join


def rates(entries: list[tuple[str, str, str]]) -> tuple[Counter[str], Counter[str]]:
    total: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    for family, secret, text in entries:
        total[family] += 1
        caught[family] += secret not in redact.redact(text)
    for family in total:
        print(f"{family}: {caught[family]}/{total[family]}")
    return caught, total


def test_every_entry_holds_its_secret():
    assert all(secret in text for _, secret, text in HELDOUT_R7 + DEV)
    assert len(HELDOUT_R7) >= 60


def test_at_least_90_percent_of_the_development_set_is_caught():
    # left: SQL VALUES, the second piece of a string split over lines
    caught, total = rates(DEV)
    assert sum(caught.values()) / sum(total.values()) >= 0.9


def test_at_least_70_percent_of_the_held_out_secrets_are_caught():
    caught, total = rates(HELDOUT_R7)
    assert sum(caught.values()) / sum(total.values()) >= 0.7
    # the families this issue generalised (encoded forms and config files lag)
    for family in ("label-i18n", "cli-tools", "provider-new", "wallet"):
        assert caught[family] / total[family] >= 0.75, (family, caught)


@pytest.mark.parametrize("text", DEV_LOOKALIKES + HELDOUT_R7_CLEAN)
def test_a_look_alike_comes_through_unchanged(text: str):
    assert redact.redact(text) == text


@pytest.mark.parametrize("channel", ["prompt", "command"])
def test_held_out_r7_secrets_stay_out_of_the_database_file(
    channel: str, tmp_path: Path, repo: Path
):
    path = tmp_path / "heldout.db"
    store = Store(path)
    a = join(store, "a", "claude", repo)
    for i, (_, _, text) in enumerate(HELDOUT_R7):
        _store_by(channel, store, text, i, a.task.id)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    blob = b"".join(p.read_bytes() for p in tmp_path.glob("heldout.db*"))
    leaked = {secret for _, secret, _ in HELDOUT_R7 if secret.encode() in blob}
    # a channel stores no secret that redact() itself leaves (the secrets repeat across
    # entries, so one miss shows under each entry that holds the same secret)
    missed = {secret for _, secret, text in HELDOUT_R7 if secret in redact.redact(text)}
    assert {s for s in leaked if not any(s in m for m in missed)} == set()


@pytest.mark.parametrize(
    ("error", "secret"),
    [
        ("invalid_api_key: sk-ant-api03-" + "Zq7XvB2mN9pL4kR8" * 4, "Zq7XvB2mN9pL4kR8"),
        ("auth failed password=Gx7#pLq2-Vw9Kq", "Gx7pLq2-Vw9Kq"),
        ("Passwort: Gx7#pLq2-Vw9Kq abgelehnt", "Gx7pLq2-Vw9Kq"),
    ],
)
def test_a_cut_off_reason_keeps_no_part_of_a_secret_in_its_error(error: str, secret: str):
    # StopFailure keeps 40 characters of the error without punctuation: redacted before that
    reason = presence.cut_off(error)
    assert secret[:8] not in reason, reason
