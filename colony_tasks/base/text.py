"""Plain text and time formatting: text that SQLite and JSON accept, clipping a text to one
line, and human-readable times; the one length limit on a text an agent writes.

Standard library only.
"""

from __future__ import annotations

import time

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


def clip(text: str, limit: int = LINE_CHARS) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
