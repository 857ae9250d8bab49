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
_forms: list[tuple[str, ...]] = []


def forms() -> tuple[str, ...]:
    """The base64 forms of :data:`NAMES` (upper and lower case, each of the three offsets in
    a group of three bytes): the characters that depend on the name's bytes alone."""
    if not _forms:
        import base64

        found: set[str] = set()
        for name in NAMES:
            for spelling in (name, name.lower()):
                raw = spelling.encode()
                for offset in range(3):
                    encoded = base64.b64encode(b"\0" * offset + raw + b"\0\0").decode()
                    first = -(-8 * offset // 6)  # the first character all inside the name
                    last = 8 * (offset + len(raw)) // 6
                    found.add(encoded[first:last])
        _forms.append(tuple(sorted(found)))
    return _forms[0]


def triggers() -> tuple[str, ...]:
    """What a text must hold (lowercase) for :func:`redact_encoded` to find anything."""
    return tuple(sorted({form.lower() for form in forms()}))


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
