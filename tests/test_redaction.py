from __future__ import annotations

from pathlib import Path

from colony_tasks import actions, redact
from colony_tasks.store import Store
from tests.helpers import join
from tests.secret_corpus import CORPUS


def test_corpus_is_large_and_every_entry_holds_its_secret():
    assert len(CORPUS) >= 40
    assert all(secret in text for secret, text in CORPUS)


def test_redact_removes_every_secret_and_marks_its_kind():
    for secret, text in CORPUS:
        cleaned = redact.redact(text)
        assert secret not in cleaned, text
    assert redact.redact("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE") == (
        "export AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]"
    )


def test_ordinary_text_is_left_alone():
    for text in [
        "fix the flaky login test in auth middleware",
        "the token bucket rate limiter needs tests",
        "password reset flow renders twice",
        "see src/auth/tokens.py line 40",
        "Use <b>bold</b> in the docs",
        "edited src/auth.py: verify the session expiry",
        "author: bob",
        "pytest tests/test_auth_middleware.py::test_expired_token_is_rejected",
    ]:
        assert redact.redact(text) == text


def test_no_secret_reaches_the_database_file(tmp_path: Path, repo: Path):
    path = tmp_path / "leak.db"
    store = Store(path)
    a = join(store, "a", "claude", repo)
    join(store, "b", "codex", repo)
    for i, (_, text) in enumerate(CORPUS):
        store.add_observation("prompt", text, session_id="a", task_id=a.task.id)
        store.add_observation(
            "command",
            f"ran: {text}",
            session_id="a",
            task_id=a.task.id,
            meta={"tool_input": {"command": text}, "output": [text]},
        )
        actions.post(store, "a", f"note {i}: {text}")
        actions.ask(store, "a", f"question {i}: {text}", to="codex")
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    blob = b"".join(p.read_bytes() for p in tmp_path.glob("leak.db*"))
    leaked = [secret for secret, _ in CORPUS if secret.encode() in blob]
    assert leaked == []
    assert b"[REDACTED:aws-access-key]" in blob
