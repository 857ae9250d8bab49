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


# Each word's blank-separated parts (the rules' words are few and asked of every text).
_PARTS: dict[str, tuple[str, ...]] = {}


class Words:
    """The answers for one text: ``word in words`` is whether ``word`` (lowercase) occurs in
    ``lowered`` or in a text :meth:`add` was given (a marker a rule has put in the text)."""

    __slots__ = ("lowered", "_distinct", "_known", "_added")

    def __init__(self, lowered: str, distinct: bool) -> None:
        """``lowered``: the text's lowercase form; ``distinct``: ask its distinct words rather
        than the text itself (worth the ``split`` on a long text only)."""
        self.lowered = lowered
        self._distinct = lowered
        if distinct:
            joined = "\n".join(set(lowered.split()))
            if len(joined) < len(lowered):
                self._distinct = joined
        self._known: dict[str, bool] = {}
        self._added = ""

    def __contains__(self, word: str) -> bool:
        found = self._known.get(word)
        if found is None:
            parts = _PARTS.get(word)
            if parts is None:
                parts = _PARTS[word] = tuple(word.split())
            if len(parts) == 1 and parts[0] == word:
                found = word in self._distinct
            else:
                found = all(part in self._distinct for part in parts) and word in self.lowered
            self._known[word] = found
        return found or (bool(self._added) and word in self._added)

    def add(self, text: str) -> None:
        """Count ``text`` (lowercase) as present too: a rule put it into the text."""
        if text not in self._added:
            self._added += "\n" + text
