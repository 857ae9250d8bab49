"""Secrets in base64: a ``.env`` file or a configuration line encoded (a Kubernetes Secret's
data, a CI variable, the output of ``… | base64``) is replaced whole by ``[REDACTED:secret]``
when its decoded text holds a secret the rules find.

Base64 keeps a name readable in a fixed form: ``PASSWORD`` encodes to one of three strings,
by where it falls in a group of three bytes. Those forms of a few sensitive names (password,
secret, token, key, in upper and lower case) are the triggers: only a text that holds one of
them (lowercase, as the rules' triggers are asked) has its base64 runs looked at, and only a
run that holds one is decoded and redacted (by the caller's redaction, which may decode a run
inside it in turn: each level is shorter by a quarter, so the work stays linear). A run whose
decoded text comes through unchanged (``TOKEN_LIMIT=5``), or is not text, stays.
Standard library only: every hook process may import this module.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MARKER = "[REDACTED:secret]"
NAMES = ("PASSW", "SECRET", "TOKEN", "_KEY", "APIKEY")
# A run of base64 (padding included), not inside a longer word.
_RUN = r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/]{16,}+={0,2}+(?![A-Za-z0-9+/=_-])"
_BLANKS = {ord("\n"): None, ord("\r"): None, ord("\t"): None}
_compiled: list[re.Pattern[str]] = []


def forms() -> tuple[str, ...]:
    """The base64 forms of :data:`NAMES` (upper and lower case, each of the three offsets in
    a group of three bytes): the characters that depend on the name's bytes alone. Written out
    in :data:`FORMS` (a hook process does not import base64 for them);
    tests/base/test_redaction_encoded.py derives them."""
    return FORMS


FORMS = (
    "0b2tlb", "9LRV", "9rZX", "BBU1NX", "BUElLRV", "Bhc3N3", "FQSUtFW", "FwaWtle", "NFQ1JFV",
    "NlY3Jld", "QQVNTV", "QVBJS0VZ", "RPS0VO", "Rva2Vu", "TRUNSRV", "U0VDUkVU", "UEFTU1",
    "UT0tFT", "VE9LRU", "X0tFW", "X2tle", "YXBpa2V5", "c2VjcmV0", "cGFzc3", "dG9rZW", "fS0VZ",
    "fa2V5", "hcGlrZX", "wYXNzd", "zZWNyZX",
)  # fmt: skip
_triggers = tuple(sorted({form.lower() for form in FORMS}))


def triggers() -> tuple[str, ...]:
    """What a text must hold (lowercase) for :func:`redact_encoded` to find anything."""
    return _triggers


def redact_encoded(text: str, redact: Callable[[str], str]) -> str:
    """``text`` with every base64 run that holds a form of a sensitive name, and whose decoded
    text ``redact`` changes, replaced by :data:`MARKER`. The decoded runs are redacted together,
    in one call, between lines no rule matches across (as folded windows are checked); if a
    rule did match across one, every candidate is replaced (failing closed)."""
    import binascii

    if not _compiled:
        _compiled.append(re.compile(_RUN))
    names = forms()
    spans: list[tuple[int, int]] = []
    decoded: list[str] = []
    for match in _compiled[0].finditer(text):
        run = match.group()
        if not any(form in run for form in names):
            continue
        body = run.rstrip("=")
        try:
            plain = binascii.a2b_base64(body + "=" * (-len(body) % 4)).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if plain.translate(_BLANKS).isprintable():  # (else binary data, not text)
            spans.append(match.span())
            decoded.append(plain)
    if not spans:
        return text
    checked = redact(_SEPARATOR.join(decoded)).split(_SEPARATOR)
    if len(checked) == len(decoded):
        spans = [span for span, a, b in zip(spans, decoded, checked, strict=True) if a != b]
    out: list[str] = []
    kept_from = 0
    for start, end in spans:
        out += [text[kept_from:start], MARKER]
        kept_from = end
    out.append(text[kept_from:])
    return "".join(out)


# Between decoded runs: a line no rule matches across (printable text holds no NUL).
_SEPARATOR = "\n\x00\n"
