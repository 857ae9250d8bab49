"""Redaction runs in linear time on any input.

Two independent checks. The static one (tests/support/redos.py) proves each rule's shape cannot
backtrack super-linearly. The dynamic one searches for slow inputs against every rule, the
``<private>`` scanner and the whole of ``redact`` (a small hill climb over units built from the
rule's own anchors, triggers and punctuation, seeded with known ReDoS shapes), then compares
growth: the slowest unit found, repeated to a 16 times longer text, must take well under 16**2
times as long. No absolute time is asserted; absolute figures live in bench/redact.py.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable

import pytest

from colony_tasks.base import redact
from colony_tasks.base.redact_rules import CODE, RULES
from tests.support.redos import Unsafe, check

KNOWN_SHAPES = [
    "a.a.a." * 3 + " key",
    "password=",
    'password="',
    "token: ",
    "://a:",
    "://:a@",
    "a@",
    "-----BEGIN PRIVATE KEY-----",
    "-----BEGIN ",
    "<private>",
    "< private",
    "</private>",
    "eyJ",
    ".eyJaaaaaaaaaa",
    "--password ",
    "mysql -u",
    "\n- name: A_SECRET\n",
    "Authorization: ",
    "Cookie: ",
    "?sig=",
    "a" * 7,
    "=" * 7,
    "-u a:",
    "Q~",
    ":AA",
]
PUNCTUATION = list(" \n\t=:;,\"'`/@.-_#?&<>[]{}()aA0~+$%")


def test_every_rule_passes_the_backtracking_check():
    bounds = {
        source: check(source).work
        for rule in RULES
        for spelled in (True, False)
        for source in rule.sources(spelled)
    }
    assert all(bound > 0 for bound in bounds.values())
    check(redact._TAG)
    check(CODE)


@pytest.mark.parametrize(
    "pattern",
    [
        # the old assignment rule: quadratic on "a.a.a.… key"
        r"(\b[\w.\-]*?(?:password|key)(?:[_\-][\w\-]*)?[\"']?\s*[:=]\s*)(\S{3,})",
        r"(a+)+b",
        r"(?:a|a)*b",
        r"\d*\d*x",
        r"(\w+)\1",
        r"(a)?(?(1)b|c)",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END|\Z)",
        r"eyJ[A-Za-z0-9_-]{8,}\.eyJ",  # the run can cross the next attempt's anchor
        r"x[a-z]*+y",  # possessive, but the anchor is inside the run's class
        r"(?=\w*x)a",
        r"[a-z]{0,200}?[a-z]{0,200}?[a-z]{0,200}?!",  # bounded, but too many ways
    ],
)
def test_the_check_refuses_shapes_that_can_backtrack(pattern: str):
    with pytest.raises(Unsafe):
        check(pattern)


def test_the_check_accepts_tails_and_guarded_runs():
    assert check(r"ghp_[A-Za-z0-9]{30,}").work < 100  # unbounded, but only in the tail
    assert check(r"://[^/\s]*+@").work < 100  # '/' is in the anchor, not in the run
    assert check(r"(?:\d*\d*)x?").work < 100  # overlapping, but nothing after can fail


def elapsed(function: Callable[[str], object], text: str, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function(text)
        best = min(best, time.perf_counter() - start)
    return best


def filled(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def slowest_unit(function: Callable[[str], object], vocabulary: list[str], seed: int) -> str:
    """Hill-climb to a short unit whose repetition is slowest per character."""
    rng = random.Random(seed)
    size = 4000
    best_unit = max(KNOWN_SHAPES, key=lambda unit: elapsed(function, filled(unit, size), 1))
    best = elapsed(function, filled(best_unit, size))
    for _ in range(30):
        unit = best_unit
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(unit))
            move = rng.random()
            if move < 0.6:
                unit = unit[:at] + rng.choice(vocabulary) + unit[at:]
            elif move < 0.8 and len(unit) > 1:
                unit = unit[:at] + unit[at + 1 :]
            else:
                unit = rng.choice(vocabulary) + unit
        unit = unit[:48] or "a"
        cost = elapsed(function, filled(unit, size))
        if cost > best:
            best_unit, best = unit, cost
    return best_unit


def growth(function: Callable[[str], object], unit: str) -> float:
    """Time on a 16x longer text over time on the short one (linear: ~16; quadratic: ~256)."""
    small, large = filled(unit, 8_000), filled(unit, 128_000)
    return min(elapsed(function, large) / elapsed(function, small) for _ in range(3))


def vocabulary_of(pattern: str, triggers: tuple[str, ...]) -> list[str]:
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_-]{1,}", pattern)
    anchors = check(pattern).anchors or []
    return list(triggers) + [t.upper() for t in triggers] + anchors + words[:30] + PUNCTUATION


def rule_function(index: int, spelled: bool = False) -> Callable[[str], object]:
    """The rule alone, with the patterns a short (or, ``spelled``, a long) text gets."""
    rule = RULES[index]
    return lambda text: redact.apply_rule(rule, text, spelled)


TARGETS = (
    [(rule.name, i, False) for i, rule in enumerate(RULES)]
    + [(rule.name + " spelled", i, True) for i, rule in enumerate(RULES) if rule.spellings]
    + [("private", -1, False), ("redact", -2, False), ("folded", -3, False)]
)
# What sends a text down the folded path (non-ASCII, escaped quotes, line continuations).
FOLDING = ["\u200b", "\u00ad", "\uff1a", "\u00a0", "\u0430", "密", '\\"', "\\\n", "ｐ", "«"]


@pytest.mark.parametrize("target", TARGETS, ids=[name for name, _, _ in TARGETS])
def test_the_slowest_input_found_grows_linearly(target: tuple[str, int, bool]):
    name, index, spelled = target
    if index >= 0:
        function = rule_function(index, spelled)
        vocabulary = vocabulary_of(RULES[index].sources()[0], RULES[index].triggers)
    elif index == -1:
        function = redact.drop_private
        vocabulary = ["<private>", "</private>", "< private ", "/>", ">"] + PUNCTUATION
    elif index == -2:
        function = redact.redact
        vocabulary = [t for rule in RULES for t in rule.triggers] + PUNCTUATION
    else:
        function = redact.redact
        vocabulary = [t for rule in RULES for t in rule.triggers] + PUNCTUATION + FOLDING
    unit = slowest_unit(function, vocabulary, seed=index)
    assert growth(function, unit) < 48, (name, unit)
