"""The mapped pass tries a rule known by its word, or with anchors, only where the word or an
anchor starts in the folded chunk's lowercase form: it must find exactly what a scan of the
chunk finds, in ASCII and non-ASCII chunks, and fall back to the scan where ``re`` equates a
letter with the word's that does not lower to it."""

from __future__ import annotations

import re

import pytest

from colony_tasks.base.redact import _compile, redact
from colony_tasks.base.redact_mapped import _matches, _word
from colony_tasks.base.redact_rules import RULES
from colony_tasks.base.redact_words import UNLOWERED
from tests.base.test_redaction_rules import EXAMPLES

TRIED_AT = [
    rule for rule in RULES if rule.anchors or any(_word(rule, p) for p in _compile(rule)[0])
]


def test_unlowered_letters_are_all_the_letters_re_equates_with_a_words_letter():
    every = "".join(map(chr, range(0x80, 0x110000)))
    letters = {c for rule in RULES for s in rule.spellings for c in s.lower()}
    found = set()
    for letter in letters:
        same = re.findall(f"(?i:{re.escape(letter)})", every)
        found.update(c for c in same if c.lower() != letter)
    assert found == set(UNLOWERED)


def test_the_assignment_rules_are_tried_at_their_word():
    names = {rule.name for rule in TRIED_AT if not rule.anchors}
    assert {"assignment-pass", "assignment-key", "assignment-token", "bearer-token"} <= names


def _spans(rule, text):
    patterns, _, replace = _compile(rule)
    alone = len(patterns) == 1 and replace is None
    tried = [[m.span() for m in _matches(rule, p, text, alone)] for p in patterns]
    scanned = [[m.span() for m in p.finditer(text)] for p in patterns]
    return tried, scanned


@pytest.mark.parametrize("rule", TRIED_AT, ids=lambda rule: rule.name)
@pytest.mark.parametrize("extra", ["", "鍵は", "ｐ\u200b"], ids=["ascii", "cjk", "folded"])
def test_tried_at_its_words_it_finds_what_a_scan_finds(rule, extra):
    example = EXAMPLES[rule.name][0]
    text = f"\n{extra}{example} ;\n{example}{extra} {example.upper()}\n{example.title()}"
    tried, scanned = _spans(rule, text)
    assert tried == scanned
    assert any(scanned)


@pytest.mark.parametrize("letter", list(UNLOWERED))
def test_a_letter_that_does_not_lower_to_the_words_falls_back_to_the_scan(letter):
    rule = next(rule for rule in RULES if rule.name == "assignment-pass")
    text = "\npassword=hunter2x\n" + "password=hunter2y".replace("s", letter)
    tried, scanned = _spans(rule, text)
    assert tried == scanned
    if letter == "\u017f":  # the long s is an s to re: both assignments match
        assert len(scanned[0]) == 2


@pytest.mark.parametrize("letter", list(UNLOWERED))
def test_what_a_rule_reads_through_a_letter_re_equates_is_redacted(letter):
    """A rule's triggers and anchors are looked for as its patterns read the text, so a label
    spelt with a long s or a dotless or dotted i ("paſsword", "ıdentified") runs the rule."""
    ascii_letter = "s" if letter == "\u017f" else "i"
    missed = []
    for rule in RULES:
        for example in EXAMPLES.get(rule.name, [])[:1]:
            variant = example.replace(ascii_letter, letter).replace(ascii_letter.upper(), letter)
            if variant == example:
                continue
            patterns = _compile(rule)[0]
            if (
                any(pattern.search("\n" + variant) for pattern in patterns)
                and redact(variant) == variant
            ):
                missed.append((rule.name, variant))
    assert missed == []
