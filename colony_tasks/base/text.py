"""Plain text and time formatting: text that SQLite and JSON accept, how a text another party
wrote is shown (:func:`fence`, :func:`one_line`, :func:`clip`, :func:`fenced`), and
human-readable times; the one length limit on a text an agent writes.

Every front end (hooks, MCP results, the CLI, the viewer) shows other parties' words through
these functions, so that no message, name or title can act on the reader: terminal controls
(an OSC 52 clipboard write, an OSC 8 link, a CSI sequence, BEL, NUL, a carriage return) are
made visible, invisible format characters (bidi embeddings, overrides and isolates, zero-width
spaces and joiners, the byte-order mark, tag characters) are removed, and a one-line field
cannot start a line of its own.

Standard library only.
"""

from __future__ import annotations

import re
import time
from typing import Any

LINE_CHARS = 240
#: The most characters of one text an agent writes: a message (longer is refused), a claim note
#: (refused, and capped where the store writes it), each string in an observation's meta (capped).
MAX_TEXT_CHARS = 16_000


def utf8_safe(text: str) -> str:
    """``text`` with lone surrogates (half an emoji from a JSON ``\\ud83d`` escape) replaced.

    SQLite stores UTF-8; a lone surrogate cannot be encoded and would make the write fail.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


# Line breaks of every kind (what ``str.splitlines`` splits on): one newline each.
_BREAKS = re.compile("\r\n|[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
# C0 and C1 controls but tab and newline, DEL, every format character (Unicode category Cf,
# with the blocks Unicode reserves for more of them) and the variation selectors supplement
# (invisible, and used to smuggle bytes into a text). Ordinary letters and emoji stay.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891"
    "\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)


def _shown(found: re.Match[str]) -> str:
    """A C0 control as its control picture (``␛``, ``␇``, ``␀``), DEL as ``␡``, a C1 control
    as ``�``; a format character is removed."""
    code = ord(found.group())
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return "\ufffd" if code <= 0x9F else ""


def fence(text: str | None) -> str:
    """``text`` safe to show to a terminal or a model, line breaks kept as newlines: controls
    made visible, invisible format characters removed (see the module docstring). Linear
    time; a text with nothing to neutralise comes back as it is."""
    return _UNSAFE.sub(_shown, _BREAKS.sub("\n", text or ""))


def one_line(text: str | None) -> str:
    """:func:`fence`, on one line: every run of whitespace and line breaks becomes one space,
    so a name or a title cannot start a line of its own."""
    return " ".join(fence(text).split())


def clip(text: str | None, limit: int = LINE_CHARS) -> str:
    """:func:`one_line`, cut to ``limit`` characters with an ellipsis."""
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fenced(value: Any) -> Any:
    """JSON data with every string in it, keys included, through :func:`fence`."""
    if isinstance(value, str):
        return fence(value)
    if isinstance(value, dict):
        return {fence(key): fenced(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [fenced(item) for item in value]
    return value


# What JSON text keeps raw that a reader must not receive: what :func:`fence` changes, and
# the line separators JSON does not escape.
_RAW_IN_JSON = re.compile(_UNSAFE.pattern[:-1] + "\x85\u2028\u2029]")


def _escape(found: re.Match[str]) -> str:
    encoded = found.group().encode("utf-16-be")
    return "".join(f"\\u{encoded[i]:02x}{encoded[i + 1]:02x}" for i in range(0, len(encoded), 2))


def escape_unsafe(json_text: str) -> str:
    """JSON text with every control, line separator and invisible format character written as
    a ``\\uXXXX`` escape: the same data for a machine, nothing that acts on a terminal."""
    return _RAW_IN_JSON.sub(_escape, json_text)


# -- times ---------------------------------------------------------------------------------


def ago(then: float | None, now: float | None = None) -> str:
    """``just now``, ``4m ago``, ``3h ago``, ``2d ago``."""
    if then is None:
        return "never"
    seconds = max(0.0, (time.time() if now is None else now) - then)
    if seconds < 45:
        return "just now"
    if seconds < 3600:
        return f"{round(seconds / 60) or 1}m ago"
    if seconds < 86400:
        return f"{round(seconds / 3600)}h ago"
    return f"{round(seconds / 86400)}d ago"


def iso(ts: float | None) -> str:
    if ts is None:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def minutes(seconds: float) -> str:
    return f"{max(0, round(seconds / 60))}m"
