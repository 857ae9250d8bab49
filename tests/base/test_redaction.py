from __future__ import annotations

from pathlib import Path

from colony_tasks.base import redact
from colony_tasks.store import Store
from colony_tasks.usecases import actions
from tests.support.helpers import join
from tests.support.nonsecret_corpus import NONSECRETS
from tests.support.secret_corpus import CORPUS


def test_corpus_is_large_and_every_entry_holds_its_secret():
    assert len(CORPUS) >= 100
    assert all(secret in text for secret, text in CORPUS)


def test_redact_removes_every_secret_and_marks_its_kind():
    for secret, text in CORPUS:
        cleaned = redact.redact(text)
        assert secret not in cleaned, text
    assert redact.redact("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE") == (
        "export AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]"
    )


def private_part(secret: str) -> str:
    """What of ``secret`` must go: a JWT's header and a webhook's host are public."""
    if secret.startswith("eyJ") and "." in secret:
        return secret[secret.index(".") :]
    if "://" in secret:
        return secret.split("/", 3)[3]
    return secret


def test_no_16_character_piece_of_any_corpus_secret_survives():
    found = []
    for secret, text in CORPUS:
        cleaned = redact.redact(text)
        part = private_part(secret)
        pieces = {part[i : i + 16] for i in range(max(len(part) - 15, 1))}
        found += [(text, piece) for piece in pieces if piece in cleaned]
    assert found == []


def test_the_non_secret_corpus_comes_through_unchanged():
    assert len(NONSECRETS) >= 50
    assert [text for text in NONSECRETS if redact.redact(text) != text] == []


def test_readable_prefixes_stay_visible():
    assert redact.redact("password=hunter2-x") == "password=[REDACTED:secret]"
    assert redact.redact('{"db_password": "a b c"}') == '{"db_password": "[REDACTED:secret]"}'
    assert redact.redact("Authorization: Bearer abcdefghijklmnop") == (
        "Authorization: Bearer [REDACTED:bearer-token]"
    )
    assert redact.redact("postgres://app:p@ss@db:5432/app") == (
        "postgres://app:[REDACTED:password]@db:5432/app"
    )
    assert redact.redact(
        "a\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\nb"
    ) == ("a\n[REDACTED:private-key]\nb")


def test_already_redacted_text_is_left_as_it_is():
    once = redact.redact("\n".join(text for _, text in CORPUS))
    assert redact.redact(once) == once


def test_private_spans_with_attributes_spaces_nesting_and_lines_are_dropped():
    assert redact.redact('a <private id="1">x</private> b') == "a  b"
    assert redact.redact("a < PRIVATE >x</ private > b") == "a  b"
    assert redact.redact("a <private>x <private>y</private> z</private> b") == "a  b"
    assert redact.redact("a <private>\nx\n</private>\nb") == "a \nb"
    assert redact.redact("a <private reason='x'>never closed\nmore") == "a "
    assert redact.redact("a <private>x <private>y</private> z") == "a "
    assert redact.redact("a </private> b <private/> c") == "a </private> b <private/> c"


def test_cap_cuts_before_redaction_and_drops_a_word_cut_in_half():
    assert redact.cap("short", 10) == "short"
    assert redact.cap("one two three", 9) == "one two …"
    assert redact.cap("x" * 50, 10) == "…"
    token = "ghp_" + "a1" * 20
    text = "see " + token + " now"
    cut = redact.redact(text, limit=len("see ") + 12)
    assert cut == "see …" and "ghp_" not in cut
    assert len(redact.redact("x " * 1000, limit=100)) <= 100


def test_the_limit_bounds_the_work_on_a_huge_text():
    huge = "password=" + "x" * 5_000_000
    assert redact.redact(huge, limit=1000) == "…"
    assert redact.redact_value({"a": ["y " * 100]}, limit=11) == {"a": ["y y y y y …"]}


def test_a_json_value_is_redacted_in_its_keys_too():
    secret, text = CORPUS[0]
    clean = redact.redact_value({"env": {text: [text, 1]}, "ok": None})
    assert secret not in repr(clean) and clean["ok"] is None
    assert clean == {"env": {redact.redact(text): [redact.redact(text), 1]}, "ok": None}


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


def test_a_long_text_takes_the_same_secrets_out():
    # above LONG_TEXT redact() runs the spelled patterns and skips some trigger tests
    texts = [text for _, text in CORPUS]
    long_text = "\n".join(texts) + "\n" + "filler line\n" * (redact.LONG_TEXT // 12)
    assert len(long_text) > redact.LONG_TEXT
    cleaned = redact.redact(long_text)
    assert [secret for secret, _ in CORPUS if secret in cleaned] == []
    assert cleaned.split("\n")[: len(texts)] == redact.redact("\n".join(texts)).split("\n")


def test_code_is_told_from_data_in_assigned_values():
    for value in [
        "None",
        "True)",
        "self.password",
        "os.environ['X']",
        "get_secret('x')",
        "str",
        "args.password",
        "db_password",
    ]:
        assert redact.is_code(value), value
    for value in ["hunter2", "None-of-your-business", "s3cr3t.value", "1(2)", "[x]"]:
        assert not redact.is_code(value), value
    assert redact.redact("password = self.password") == "password = self.password"


def test_a_secret_in_folded_text_is_replaced_in_the_original_characters():
    # the match runs on a folded copy; what is kept is the original text, invisible
    # characters, full-width letters and other scripts included
    assert redact.redact("Заметка: pass\u200bword=abc12345xyz — конец") == (
        "Заметка: pass\u200bword=[REDACTED:secret] — конец"
    )
    # a label in another language takes the word after it whole
    assert redact.redact("Пароль: pass\u200bword=abc12345xyz — конец") == (
        "Пароль: [REDACTED:password] — конец"
    )
    assert (
        redact.redact("ｐａｓｓｗｏｒｄ＝hunter2-x ｏｋ")
        == "ｐａｓｓｗｏｒｄ＝[REDACTED:secret] ｏｋ"
    )
    token = "ghp_" + "a1B2c3D4e5" * 4
    assert redact.redact(f"令牌{token[:9]}\u200b{token[9:]}请保管") == (
        "令牌[REDACTED:github-token]请保管"
    )
    assert redact.redact('{"m": "{\\"password\\": \\"abc123xyz\\"}"}') == (
        '{"m": "{\\"password\\": \\"[REDACTED:secret]\\"}"}'
    )
    assert (
        redact.redact("curl -u \\\n  admin:pw12345 x")
        == "curl -u \\\n  admin:[REDACTED:password] x"
    )


def test_folding_leaves_text_without_a_secret_exactly_as_it_was():
    for text in [
        "Ｆｕｌｌ ｗｉｄｔｈ",
        "zero\u200bwidth",
        "密钥abc",
        'a \\"b\\" c',
        "x \\\n y",
        "pаss",
    ]:
        assert redact.fold(text) is not None
        assert redact.redact(text) == text


def test_a_megabyte_of_folded_text_is_redacted_within_the_cap():
    unit = '密钥 pass\u200bword=abc12345xyz ｏｋ \\"q\\" '
    text = unit * (1_000_000 // len(unit))
    cleaned = redact.redact(text, limit=1_000_000)
    assert "abc12345xyz" not in cleaned
    assert cleaned.count("[REDACTED:secret]") == text.count("abc12345xyz")
