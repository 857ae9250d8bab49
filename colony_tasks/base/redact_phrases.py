"""Wallet recovery phrases: twelve or more words in a row, every one from the BIP-39 English
list (:mod:`colony_tasks.base.redact_bip39`), are replaced whole by ``[REDACTED:mnemonic]``.

A phrase is 12, 15, 18, 21 or 24 words; a run of list words is replaced whatever its length
from twelve on (a phrase pasted with a word missing or added is still one). Ordinary prose
rarely runs twelve words without one off the list (``the``, ``and``, ``of`` are not on it).
The candidates are found by one pattern in C (runs of 12 to 24 lowercase words of three to
eight letters, a blank between each); only they cost Python. Linear: the pattern's repeat is
bounded, and the word list is loaded the first time a candidate appears.
"""

from __future__ import annotations

import re

MARKER = "[REDACTED:mnemonic]"
# The first word is found by looking back from the match (a blank before it is not needed).
_RUN = r" [a-z]{3,8}(?: [a-z]{3,8}){10,23}(?![A-Za-z0-9])"
_compiled: list[re.Pattern[str]] = []
_words: list[frozenset[str]] = []


def redact_mnemonics(text: str) -> str:
    """``text`` with every run of twelve or more BIP-39 words replaced."""
    if not _compiled:
        _compiled.append(re.compile(_RUN))
    out: list[str] = []
    kept_from = 0
    for match in _compiled[0].finditer(text):
        start, end = match.span()
        words = match.group().split()
        before = text[max(start - 8, kept_from) : start].rsplit(None, 1)
        head = before[-1] if before and not text[start - 1 : start].isspace() else ""
        whole = start - len(head) == 0 or not text[start - len(head) - 1].isalpha()
        if head.isascii() and head.isalpha() and head.islower() and 3 <= len(head) <= 8 and whole:
            words.insert(0, head)
            start -= len(head)
        else:
            start += 1  # the blank before the first word stays
        if len(words) < 12 or not _all_listed(words):
            continue
        out.append(text[kept_from:start])
        out.append(MARKER)
        kept_from = end
    if not out:
        return text
    out.append(text[kept_from:])
    return "".join(out)


def _all_listed(words: list[str]) -> bool:
    if not _words:
        from .redact_bip39 import WORDS

        _words.append(frozenset(WORDS.split()))
    return all(word in _words[0] for word in words)
