"""The mapped pass: a rule applied to a folded text, each character's original span carried along.

:mod:`colony_tasks.base.redact` runs the rules on the folded copy of a window of text (see
:mod:`colony_tasks.base.redact_fold`) and replaces in the original characters what they replace
there. A folded chunk is short, so its patterns are those for short texts: a rule known by its
word starts with that word case-insensitive, which ``re`` tries at every position of the chunk.
Such a rule, and a rule with anchors, is tried here only where its word or an anchor starts
(found by ``str.find`` in C): the same matches as a scan, since every match starts there and a
match tried at a position sees the text before it. A word is looked for this way only in an
ASCII chunk, where its case-insensitive spellings are exactly those whose lowercase form is the
word (beyond ASCII, ``re`` equates more letters, such as the long s with ``s``).

Standard library only: every hook process may import it.
"""

from __future__ import annotations

import re

from .redact_words import lower

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from .redact_rules import Rule

    Compiled = tuple[list[re.Pattern[str]], str, Callable[[re.Match[str]], str] | None]


def apply_mapped(
    rule: Rule,
    compiled: Compiled,
    work: str,
    starts: list[int],
    ends: list[int],
    marks: str,
    lowered: str | None = None,
) -> tuple[str, list[int], list[int], str]:
    """``rule`` (its short-text patterns, marker and code check: ``compiled``) applied to the
    folded text ``work``; ``starts`` and ``ends``: each character's original span, ``marks``:
    "1" under a character a rule put there. All four are returned updated (``work`` the same
    object when its text is unchanged; ``starts`` and ``ends`` may be changed in place).
    ``lowered``: ``lower(work)``, when the caller has it."""
    patterns, marker, replace = compiled
    alone = len(patterns) == 1 and replace is None
    for pattern in patterns:
        spans: list[tuple[int, int]] = []  # (where the marker goes, the match's end)
        for match in _matches(rule, pattern, work, alone, lowered):
            a, b = match.span()
            keep = match.group(1) if pattern.groups else ""
            if replace is not None and replace(match) == match.group():
                continue
            cut = a + len(keep)
            if cut < b:
                spans.append((cut, b))
        if not spans:
            continue
        if all(b - cut == len(marker) and work.startswith(marker, cut) for cut, b in spans):
            # the markers are there already (a rule that matches its own output, such as a
            # URL's redacted password): the text stays, only the spans and marks change
            for cut, b in spans:
                starts[cut:b] = [starts[cut]] * (b - cut)
                ends[cut:b] = [ends[b - 1]] * (b - cut)
            marks = _marked(marks, spans)
            continue
        work, starts, ends, marks = _replaced(work, starts, ends, marks, spans, marker)
        lowered = None
    return work, starts, ends, marks


def _marked(marks: str, spans: list[tuple[int, int]]) -> str:
    """``marks`` with "1" under each span."""
    pieces = []
    last = 0
    for cut, b in spans:
        pieces += [marks[last:cut], "1" * (b - cut)]
        last = b
    pieces.append(marks[last:])
    return "".join(pieces)


def _replaced(
    work: str,
    starts: list[int],
    ends: list[int],
    marks: str,
    spans: list[tuple[int, int]],
    marker: str,
) -> tuple[str, list[int], list[int], str]:
    """``work`` with ``marker`` in place of each span, and its maps and marks to match."""
    pieces: list[str] = []
    new_starts: list[int] = []
    new_ends: list[int] = []
    new_marks: list[str] = []
    last = 0
    for cut, b in spans:
        pieces.append(work[last:cut])
        new_starts.extend(starts[last:cut])
        new_ends.extend(ends[last:cut])
        new_marks.append(marks[last:cut])
        pieces.append(marker)
        new_starts.extend([starts[cut]] * len(marker))
        new_ends.extend([ends[b - 1]] * len(marker))
        new_marks.append("1" * len(marker))
        last = b
    pieces.append(work[last:])
    new_starts.extend(starts[last:])
    new_ends.extend(ends[last:])
    new_marks.append(marks[last:])
    return "".join(pieces), new_starts, new_ends, "".join(new_marks)


def _matches(
    rule: Rule, pattern: re.Pattern[str], work: str, alone: bool, lowered: str | None = None
) -> Iterable[re.Match[str]]:
    """``pattern.finditer(work)``, tried only where a match can start when the rule says where
    (``alone``: the pattern is the rule's only one and replaces every match, as
    :func:`colony_tasks.base.redact.apply_rule` requires of a rule with anchors; ``lowered``:
    ``lower(work)``, when the caller has it: a chunk runs some forty rules, most of which
    replace nothing, and lowering it for each was a tenth of a dense text's redaction)."""
    if rule.anchors and alone:
        if rule.cased:
            return tried_at(pattern, work, work, rule.anchors)
        return tried_at(pattern, work, lower(work) if lowered is None else lowered, rule.anchors)
    word = _word(rule, pattern)
    if word:
        return tried_at(pattern, work, lower(work) if lowered is None else lowered, (word,))
    return pattern.finditer(work)


_WORDS: dict[str, str] = {}


def _word(rule: Rule, pattern: re.Pattern[str]) -> str:
    """The word every match of ``pattern`` starts with, case-insensitive, when it is a short
    text's pattern of a rule known by its word; else ""."""
    found = _WORDS.get(pattern.pattern)
    if found is None:
        word = rule.spellings[0] if rule.spellings else ""
        head = f"(?P<keep>(?i:{word})"
        found = _WORDS[pattern.pattern] = (
            lower(word) if word and pattern.pattern.startswith(head) else ""
        )
    return found


def tried_at(
    pattern: re.Pattern[str], work: str, lowered: str, words: tuple[str, ...]
) -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` in ``work`` that start where one of ``words`` starts in
    ``lowered``, left to right, none overlapping (as ``finditer`` finds them)."""
    places: set[int] = set()
    for word in words:
        at = lowered.find(word)
        while at != -1:
            places.add(at)
            at = lowered.find(word, at + 1)
    free_from = 0
    for at in sorted(places):
        if at < free_from:
            continue
        match = pattern.match(work, at)
        if match is not None:
            yield match
            free_from = max(match.end(), at + 1)
