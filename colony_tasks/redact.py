"""Redaction applied to every text before it is stored.

``<private>…</private>`` spans are dropped (an unclosed tag drops the rest of the text), then
secrets are replaced by ``[REDACTED:<kind>]``. The store calls :func:`redact` in its write path,
so no front end can skip it.

Each rule carries cheap lowercase trigger substrings; its regex is compiled only the first time
a text contains a trigger. Most texts hold no secret, so a hook process compiles few patterns
(compiling them all costs ~5 ms on the target machine). Standard library only.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# (kind, lowercase triggers, pattern, flags, replacement). Order matters: specific token
# formats first, generic assignments last. In replacements, \g<n> keeps a matched prefix.
RULES: tuple[tuple[str, tuple[str, ...], str, int, str], ...] = (
    (
        "private-key",
        ("private key",),
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
        re.DOTALL,
        "[REDACTED:private-key]",
    ),
    ("anthropic-key", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_\-]{16,}", 0, "[REDACTED:anthropic-key]"),
    (
        "openai-key",
        ("sk-",),
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        0,
        "[REDACTED:openai-key]",
    ),
    (
        "aws-access-key",
        ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "aipa"),
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",
        0,
        "[REDACTED:aws-access-key]",
    ),
    (
        "aws-secret-key",
        ("aws_secret",),
        r"(aws_secret_access_key|aws_secret_key)(\s*[=:]\s*[\"']?)[A-Za-z0-9/+=]{40}",
        re.IGNORECASE,
        r"\g<1>\g<2>[REDACTED:aws-secret-key]",
    ),
    (
        "github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}",
        0,
        "[REDACTED:github-token]",
    ),
    (
        "github-token",
        ("github_pat_",),
        r"\bgithub_pat_[A-Za-z0-9_]{40,}",
        0,
        "[REDACTED:github-token]",
    ),
    ("gitlab-token", ("glpat-",), r"\bglpat-[A-Za-z0-9_\-]{20,}", 0, "[REDACTED:gitlab-token]"),
    ("slack-token", ("xox",), r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", 0, "[REDACTED:slack-token]"),
    (
        "slack-webhook",
        ("hooks.slack.com",),
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
        0,
        "[REDACTED:slack-webhook]",
    ),
    ("google-api-key", ("aiza",), r"\bAIza[0-9A-Za-z_\-]{35}", 0, "[REDACTED:google-api-key]"),
    (
        "stripe-key",
        ("_live_", "_test_"),
        r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
        0,
        "[REDACTED:stripe-key]",
    ),
    ("npm-token", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}", 0, "[REDACTED:npm-token]"),
    (
        "jwt",
        ("eyj",),
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        0,
        "[REDACTED:jwt]",
    ),
    (
        "bearer-token",
        ("authorization",),
        r"(\bauthorization[\"']?\s*[:=]\s*[\"']?(?:bearer|token|basic)\s+)(?!\[REDACTED)"
        r"[A-Za-z0-9._~+/=\-]{8,}",
        re.IGNORECASE,
        r"\g<1>[REDACTED:bearer-token]",
    ),
    (
        "bearer-token",
        ("bearer",),
        r"(\bbearer\s+)(?!\[REDACTED)[A-Za-z0-9._~+/\-]{16,}=*",
        re.IGNORECASE,
        r"\g<1>[REDACTED:bearer-token]",
    ),
    (
        "url-credentials",
        ("://",),
        r"(\b[a-z][a-z0-9+.\-]*://[^/\s:@]+:)[^/\s@]{3,}(@)",
        0,
        r"\g<1>[REDACTED:password]\g<2>",
    ),
    (
        "assignment",
        ("pass", "pwd", "secret", "token", "key", "auth"),
        # The key ends in a sensitive word, optionally followed by "_suffix" ("auth_token",
        # "PGPASSWORD", "x-api-key"), never by a dot or more letters: "auth.py: verify",
        # "author: bob" and "test_auth_middleware.py::" are not secrets.
        r"(\b[\w.\-]*?(?:password|passwd|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key"
        r"|private[_\-]?key|client[_\-]?secret|authorization|auth)(?:[_\-][\w\-]*)?[\"']?\s*[:=]\s*)"
        r"(?![\"']?\[REDACTED)(\"[^\"\n]{3,}\"|'[^'\n]{3,}'|[^\s\"',;&]{3,})",
        re.IGNORECASE,
        r"\g<1>[REDACTED:secret]",
    ),
)
PRIVATE = (r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)

_compiled: dict[int, re.Pattern[str]] = {}


def _pattern(index: int) -> re.Pattern[str]:
    pattern = _compiled.get(index)
    if pattern is None:
        source, flags = PRIVATE if index < 0 else RULES[index][2:4]
        pattern = _compiled[index] = re.compile(source, flags)
    return pattern


def utf8_safe(text: str) -> str:
    """``text`` with lone surrogates (half an emoji from a JSON ``\\ud83d`` escape) replaced.

    SQLite stores UTF-8; a lone surrogate cannot be encoded and would make the write fail.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def redact(text: str) -> str:
    """Drop ``<private>`` spans and replace secrets in ``text`` (made UTF-8 safe first)."""
    if not text:
        return text
    text = utf8_safe(text)
    lowered = text.lower()
    if "<private" in lowered:
        text = _pattern(-1).sub("", text)
        lowered = text.lower()
    for index, (_, triggers, _, _, replacement) in enumerate(RULES):
        if any(trigger in lowered for trigger in triggers):
            text = _pattern(index).sub(replacement, text)
    return text


def redact_value(value: Any) -> Any:
    """Redact every string inside a JSON-like value (dicts, lists, strings)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(item) for item in value]
    return value
