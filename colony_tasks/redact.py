"""Redaction applied to every text before it is stored.

``<private>…</private>`` spans are dropped (an unclosed tag drops the rest of the text), then
secrets are replaced by ``[REDACTED:<kind>]``. The store calls :func:`redact` in its write path,
so no front end can skip it. Standard library only.
"""

from __future__ import annotations

import re
from typing import Any

PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)

# Order matters: specific token formats first, generic assignments last.
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private-key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    (
        "aws-access-key",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),
    ),
    (
        "aws-secret-key",
        re.compile(
            r"(?i)(aws_secret_access_key|aws_secret_key)(\s*[=:]\s*[\"']?)[A-Za-z0-9/+=]{40}"
        ),
    ),
    ("github-token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}")),
    ("github-token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("stripe-key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    (
        "bearer-token",
        re.compile(
            r"(?i)(\bauthorization\s*[:=]\s*[\"']?(?:bearer|token|basic)\s+)[A-Za-z0-9._~+/=\-]{8,}"
        ),
    ),
    ("bearer-token", re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/\-]{16,}=*")),
    (
        "url-credentials",
        re.compile(r"(\b[a-z][a-z0-9+.\-]*://[^/\s:@]+:)[^/\s@]{3,}(@)"),
    ),
    (
        "assignment",
        re.compile(
            r"(?i)(\b[\w.\-]*(?:password|passwd|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key"
            r"|private[_\-]?key|client[_\-]?secret|auth)[\w.\-]*[\"']?\s*[:=]\s*)"
            r"(?![\"']?\[REDACTED)(\"[^\"\n]{3,}\"|'[^'\n]{3,}'|[^\s\"',;&]{3,})"
        ),
    ),
)


def _replace(kind: str):
    def sub(match: re.Match[str]) -> str:
        groups = match.groups()
        if kind == "assignment":
            return f"{match.group(1)}[REDACTED:secret]"
        if kind == "url-credentials":
            return f"{match.group(1)}[REDACTED:password]{match.group(2)}"
        if kind in ("bearer-token", "aws-secret-key") and groups and groups[0]:
            prefix = "".join(g for g in groups[: 2 if kind == "aws-secret-key" else 1] if g)
            return f"{prefix}[REDACTED:{kind}]"
        return f"[REDACTED:{kind}]"

    return sub


_SUBS = tuple((pattern, _replace(kind)) for kind, pattern in PATTERNS)


def redact(text: str) -> str:
    """Drop ``<private>`` spans and replace secrets in ``text``."""
    if not text:
        return text
    if "<" in text:
        text = PRIVATE.sub("", text)
    for pattern, sub in _SUBS:
        text = pattern.sub(sub, text)
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
