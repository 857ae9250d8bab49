"""A static check that a regular expression cannot backtrack super-linearly in Python's ``re``.

:func:`check` walks the parse tree (``re._parser``) and accepts a pattern only in a shape whose
matching time is linear in the text's length, whatever the text:

- Bounded parts. A repeat whose maximum is at most :data:`BOUND` is bounded. Along a sequence
  the check multiplies the number of ways each part can match (what backtracking may retry)
  into a per-start-position work bound ``K``; the search loop tries at most one match per
  start position, so the bounded parts cost at most ``K * n``.
- The tail. A greedy or possessive repeat of one character class may be unbounded when
  nothing after it can fail (only optional parts follow). Reaching it means the match
  succeeds, so what it scans is consumed by the match and never scanned again.
- Guarded runs. Anywhere else an unbounded repeat must be possessive (it never gives back
  characters) and its class must exclude a character of every literal anchor the pattern
  starts with. Every match attempt starts at an anchor, so a run started from one attempt
  stops at the next attempt's anchor: runs of different attempts do not overlap, and each
  character is scanned by a bounded number of them. A possessive repeat of a group is
  accepted on the same terms, its body checked the same way.
- Refused: backreferences, conditionals, lazy unbounded repeats, unbounded repeats in
  lookarounds that are not guarded runs, and any ``K`` above :data:`MAX_WORK`.

The argument is the one behind "no nested quantifiers, no overlapping adjacent quantifiers":
it is made precise by counting the ways, so adjacent overlapping classes are accepted only
where their combined ways stay bounded or in the tail, where backtracking never happens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]

BOUND = 256  # a repeat allowing more than this many iterations counts as unbounded
MAX_WORK = 200_000  # the largest per-start-position work bound a rule may have

SINGLE = {C.LITERAL, C.NOT_LITERAL, C.IN, C.ANY}
REPEATS = {C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT}


class Unsafe(ValueError):
    """The pattern has a shape that may backtrack super-linearly."""


@dataclass
class Report:
    work: int  # the per-start-position work bound K
    anchors: list[str] | None  # the literal prefixes every match attempt starts with


def check(pattern: str) -> Report:
    """Raise :class:`Unsafe` unless ``pattern`` matches in linear time; return its bound."""
    tree = _parser.parse(pattern)
    anchors = _anchors(list(tree))
    checker = _Checker(anchors)
    _, work = checker.seq(list(tree), rest_infallible=True, in_look=False)
    if work > MAX_WORK:
        raise Unsafe(f"per-position work bound {work} exceeds {MAX_WORK}")
    return Report(work, anchors)


def _anchors(items: list) -> list[str] | None:
    """The literal strings every match attempt starts with, or None when there are none."""
    if not items:
        return None
    op, av = items[0]
    if op == C.LITERAL:
        text = ""
        for op2, av2 in items:
            if op2 != C.LITERAL:
                break
            text += chr(av2)
        return [text]
    if op == C.SUBPATTERN:
        return _anchors(list(av[3]))
    if op == C.BRANCH:
        found: list[str] = []
        for branch in av[1]:
            sub = _anchors(list(branch))
            if sub is None:
                return None
            found += sub
        return found
    return None


def _infallible(items: list) -> bool:
    """True when ``items`` always match (possibly empty) wherever they are tried."""
    return all(_item_infallible(op, av) for op, av in items)


def _item_infallible(op, av) -> bool:
    if op in REPEATS:
        return av[0] == 0
    if op == C.SUBPATTERN:
        return _infallible(list(av[3]))
    if op == C.ATOMIC_GROUP:
        return _infallible(list(av))
    if op == C.BRANCH:
        return any(_infallible(list(b)) for b in av[1])
    return False


def _matches(op, av, char: str) -> bool:
    """Whether a one-character node can match ``char`` (conservatively: True if unsure)."""
    code = ord(char)
    if op == C.LITERAL:
        return av == code
    if op == C.NOT_LITERAL:
        return av != code
    if op == C.ANY:
        return char != "\n"
    if op == C.IN:
        negate = False
        hit = False
        for op2, av2 in av:
            if op2 == C.NEGATE:
                negate = True
            elif op2 == C.LITERAL:
                hit |= av2 == code
            elif op2 == C.RANGE:
                hit |= av2[0] <= code <= av2[1]
            elif op2 == C.CATEGORY:
                hit |= _category(av2, char)
            else:
                return True
        return hit != negate
    return True


def _category(category, char: str) -> bool:
    word = char.isalnum() or char == "_"
    return {
        C.CATEGORY_DIGIT: char.isdigit(),
        C.CATEGORY_NOT_DIGIT: not char.isdigit(),
        C.CATEGORY_SPACE: char.isspace(),
        C.CATEGORY_NOT_SPACE: not char.isspace(),
        C.CATEGORY_WORD: word,
        C.CATEGORY_NOT_WORD: not word,
    }.get(category, True)


class _Checker:
    def __init__(self, anchors: list[str] | None) -> None:
        self.anchors = anchors

    def guarded(self, op, av) -> bool:
        """A one-character node that cannot match some character of every anchor (either case)."""
        if not self.anchors:
            return False
        return all(
            any(not _matches(op, av, c) and not _matches(op, av, c.swapcase()) for c in anchor)
            for anchor in self.anchors
        )

    def seq(self, items: list, *, rest_infallible: bool, in_look: bool) -> tuple[int, int]:
        """(ways, work) of a sequence: ways multiply, work adds up over the ways so far."""
        ways, work = 1, 0
        for index, (op, av) in enumerate(items):
            rest = rest_infallible and _infallible(items[index + 1 :])
            item_ways, item_work = self.item(op, av, rest_infallible=rest, in_look=in_look)
            # Once the rest of the pattern from here on cannot fail, this part is reached at
            # most once per attempt: reaching it means the match succeeds.
            tail = rest and _item_infallible(op, av) and not in_look
            work += item_work if tail else ways * item_work
            ways *= item_ways
        return ways, work

    def item(self, op, av, *, rest_infallible: bool, in_look: bool) -> tuple[int, int]:
        if op in SINGLE or op == C.AT:
            return 1, 1
        if op == C.SUBPATTERN:
            return self.seq(list(av[3]), rest_infallible=rest_infallible, in_look=in_look)
        if op == C.ATOMIC_GROUP:
            _, work = self.seq(list(av), rest_infallible=rest_infallible, in_look=in_look)
            return 1, work
        if op == C.BRANCH:
            ways = work = 0
            for branch in av[1]:
                w, k = self.seq(list(branch), rest_infallible=rest_infallible, in_look=in_look)
                ways, work = ways + w, work + k
            return ways, work
        if op in (C.ASSERT, C.ASSERT_NOT):
            _, work = self.seq(list(av[1]), rest_infallible=False, in_look=True)
            return 1, work
        if op in REPEATS:
            return self.repeat(op, av, rest_infallible=rest_infallible, in_look=in_look)
        raise Unsafe(f"{op} is not allowed (backreferences and conditionals can backtrack)")

    def repeat(self, op, av, *, rest_infallible: bool, in_look: bool) -> tuple[int, int]:
        low, high, body = av[0], av[1], list(av[2])
        single = len(body) == 1 and body[0][0] in SINGLE
        if high <= BOUND:
            body_ways, body_work = self.seq(body, rest_infallible=False, in_look=in_look)
            if op == C.POSSESSIVE_REPEAT:
                return 1, high * body_work
            # as ``high`` copies of the body, those after ``low`` optional
            ways = sum(body_ways**k for k in range(low, high + 1))
            return ways, sum(body_ways**k * body_work for k in range(high))
        if low > BOUND:
            raise Unsafe(f"a repeat of at least {low} is too long a bounded head")
        if op == C.MIN_REPEAT:
            raise Unsafe("a lazy unbounded repeat rescans its continuation at every step")
        if single:
            if rest_infallible and not in_look:
                return 1, low + 1  # the tail: reaching it means success, its scan is consumed
            if op == C.POSSESSIVE_REPEAT and self.guarded(*body[0]):
                return 1, low + 1
            raise Unsafe(
                "an unbounded run followed by something that can fail must be possessive and"
                " exclude a character of the anchor"
            )
        if op != C.POSSESSIVE_REPEAT:
            raise Unsafe("an unbounded repeat of a group must be possessive")
        if _parser.SubPattern(_parser.State(), body).getwidth()[0] == 0:
            raise Unsafe("an unbounded repeat of a group that can match empty")
        _, body_work = self.seq(body, rest_infallible=False, in_look=in_look)
        return 1, body_work


def compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True
