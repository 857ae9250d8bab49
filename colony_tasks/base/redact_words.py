"""Which of the rules' words (triggers, anchors) a text holds, asked once per word.

:mod:`colony_tasks.base.redact` runs a rule only when one of its triggers occurs in the text,
and tries a rule with anchors only where one of them starts. On a long text each such question
asked of the whole text is a full scan (about half a millisecond per megabyte each, for some
three hundred words). A long text is therefore asked through its *distinct* words: one
``split`` (in C) of its lowercase form into the runs between blanks, kept once each and joined
by newlines. A word without blanks occurs in the text exactly when it occurs inside one of
those runs, so it is looked for in that much shorter string; a word with blanks is looked for in
the text only when each of its blank-separated parts is there. Prose, code and logs repeat
their words, so the distinct ones are a small part of the text.

Standard library only: every hook process imports this module.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# The letters ``re``'s case-insensitive patterns take for another lowercase letter than the one
# ``str.lower`` gives: each stands for the lowercase of its uppercase (long s for s, final sigma
# for sigma, the dotless i and the Cyrillic small-letter variants U+1C80-U+1C88 for their plain
# letters), and the dotted capital I for i (it alone lowers to two characters).
# tests/base/test_redaction_mapped.py derives the list from every code point.
UNLOWERED = (
    "\u00b5\u0130\u0131\u017f\u0345\u03c2\u03d0\u03d1\u03d5\u03d6\u03f0\u03f1\u03f5"
    "\u1c80\u1c81\u1c82\u1c83\u1c84\u1c85\u1c86\u1c87\u1c88\u1e9b\u1fbe"
)
_AS_RE_READS = str.maketrans({c: "i" if c == "\u0130" else c.upper().lower() for c in UNLOWERED})
_HOLDS_UNLOWERED = re.compile(f"[{UNLOWERED}]")


def lower(text: str) -> str:
    """``text.lower()`` as the rules' case-insensitive patterns read it: the letters of
    :data:`UNLOWERED` become the letter ``re`` takes them for. Triggers and anchors are
    looked for in it, so a label spelt with one of them ("paſsword", "пар\u1c82ль") still
    runs its rule; and it has the length of ``text``."""
    if text.isascii() or _HOLDS_UNLOWERED.search(text) is None:
        return text.lower()
    return text.translate(_AS_RE_READS).lower()


def lowering(text: str) -> Callable[[str], str]:
    """The lowering for ``text`` and for what the rules make of it (they put in only ASCII):
    ``str.lower`` when it holds no letter of :data:`UNLOWERED` (one scan, not one per
    lowering), else :func:`lower`."""
    if text.isascii() or _HOLDS_UNLOWERED.search(text) is None:
        return str.lower
    return lower


# Each word's blank-separated parts (the rules' words are few and asked of every text).
_PARTS: dict[str, tuple[str, ...]] = {}


def _parts(word: str) -> tuple[str, ...]:
    parts = _PARTS.get(word)
    if parts is None:
        parts = _PARTS[word] = tuple(word.split())
    return parts


def _deduplicated(lowered: str) -> str:
    """``lowered`` or, when its lines repeat (logs, test runs, pasted output: judged on its
    first lines), its distinct lines: no word spans a line break, so either holds the same
    words, and the lines are fewer to split than the words."""
    sample = lowered[:SAMPLE].splitlines()
    if len(set(sample)) * 2 > len(sample):
        return lowered
    return "\n".join(set(lowered.splitlines()))


SAMPLE = 65_536  # characters from the start of a long text that judge whether its lines repeat


class Asked:
    """Words asked of every text at once (the rules' triggers); for a long text's distinct
    words, split into those without blanks and those with, each with its parts."""

    __slots__ = ("words", "_split")

    def __init__(self, words: tuple[str, ...]) -> None:
        self.words = words
        self._split: list[tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]] = []

    def split(self) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
        """The words without blanks, and those with blanks each with its parts."""
        if not self._split:
            plain = tuple(w for w in self.words if _parts(w) == (w,))
            blank = tuple((w, _parts(w)) for w in self.words if _parts(w) != (w,))
            self._split.append((plain, blank))
        return self._split[0]


class Words:
    """The answers for one text: ``word in words`` is whether ``word`` (lowercase) occurs in
    ``lowered`` or in a text :meth:`add` was given (a marker a rule has put in the text);
    ``present`` holds the asked words (see :class:`Asked`) that do, found at once by a set
    comprehension rather than a call per word. Given the text itself, it also answers for
    words and shapes as written (:meth:`cased`, :meth:`holds`)."""

    __slots__ = (
        "lowered",
        "present",
        "_distinct",
        "_cased",
        "_known",
        "_known_cased",
        "_added",
        "_added_cased",
        "_asked",
    )

    def __init__(
        self, lowered: str, distinct: bool, asked: Asked | None = None, text: str | None = None
    ) -> None:
        """``lowered``: the text's lowercase form (:func:`lower` or ``str.lower``, as
        :func:`lowering` chose); ``distinct``: ask its distinct words rather than the text
        itself (worth the ``split`` on a long text only); ``text``: the text, when the caller
        asks for words as written (then its distinct words are taken from it, and lowered:
        the words of ``lowered`` are the lowered words of ``text``)."""
        self.lowered = lowered
        self._distinct = lowered
        self._cased = text
        if distinct:
            if text is None:
                joined = "\n".join(set(_deduplicated(lowered).split()))
            else:
                cased = "\n".join(set(_deduplicated(text).split()))
                joined = lower(cased)
            if len(joined) < len(lowered):
                self._distinct = joined
                if text is not None:
                    self._cased = cased
        self._known: dict[str, bool] = {}
        self._known_cased: dict[str, bool] = {}
        self._added = ""
        self._added_cased = ""
        self._asked = asked
        self.present: set[str] = set()
        if asked is not None and self._distinct is lowered:  # (a word is found as it is)
            self.present = {word for word in asked.words if word in lowered}
        elif asked is not None:
            hay = self._distinct
            plain, blank = asked.split()
            self.present = {word for word in plain if word in hay}
            self.present.update(
                word for word, parts in blank if all(p in hay for p in parts) and word in lowered
            )

    def __contains__(self, word: str) -> bool:
        found = self._known.get(word)
        if found is None:
            parts = _parts(word)
            if parts == (word,):
                found = word in self._distinct
            else:
                found = all(part in self._distinct for part in parts) and word in self.lowered
            self._known[word] = found
        return found or (bool(self._added) and word in self._added)

    def cased(self, literal: str) -> bool:
        """Whether ``literal`` (which holds no blank), as written, occurs in one of the words
        (or in a text :meth:`add` was given); True when the text was not given."""
        if self._cased is None:
            return True
        found = self._known_cased.get(literal)
        if found is None:
            found = self._known_cased[literal] = literal in self._cased
        return found or literal in self._added_cased

    def holds(self, shape: str) -> bool:
        """Whether the pattern ``shape`` (which matches no blank) matches, as written, in one
        of the words (or in a text :meth:`add` was given); True when the text was not given."""
        if self._cased is None:
            return True
        found = self._known_cased.get(shape)
        if found is None:
            found = self._known_cased[shape] = re.search(shape, self._cased) is not None
        return found or (
            bool(self._added_cased) and re.search(shape, self._added_cased) is not None
        )

    def add(self, text: str) -> None:
        """Count ``text`` as present too: a rule put it into the text."""
        if text not in self._added_cased:
            self._added_cased += "\n" + text
            self._added += "\n" + lower(text)
            if self._asked is not None:
                lowered = lower(text)
                self.present.update(w for w in self._asked.words if w in lowered)
