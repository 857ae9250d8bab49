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
from colony_tasks.base.redact_words import UNLOWERED, lower
from tests.base.test_redaction_rules import EXAMPLES

TRIED_AT = [
    rule for rule in RULES if rule.anchors or any(_word(rule, p) for p in _compile(rule)[0])
]


def test_unlowered_letters_are_every_letter_whose_uppercase_lowers_to_another():
    def unlowered(c: str) -> bool:
        if len(c.lower()) != 1:
            return True  # the dotted capital I
        upper = c.upper()
        return len(upper) == 1 and len(upper.lower()) == 1 and upper.lower() != c.lower()

    assert {c for c in map(chr, range(0x80, 0x110000)) if unlowered(c)} == set(UNLOWERED)


def test_every_letter_re_equates_with_a_rule_words_letter_lowers_to_it():
    every = "".join(map(chr, range(0x80, 0x110000)))
    words = [s for rule in RULES for s in (*rule.spellings, *rule.anchors, *rule.triggers)]
    for letter in {c for word in words for c in lower(word)}:
        same = re.findall(f"(?i:{re.escape(letter)})", every)
        assert {lower(c) for c in same} <= {letter}, letter


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
    spelt with a letter ``re`` equates with another ("paſsword", "ıdentified", "пар\u1c82ль")
    runs the rule."""
    plain = lower(letter)
    missed = []
    for rule in RULES:
        for example in EXAMPLES.get(rule.name, [])[:1]:
            variant = example.replace(plain, letter).replace(plain.upper(), letter)
            if variant == example:
                continue
            patterns = _compile(rule)[0]
            if any(p.search("\n" + variant) for p in patterns) and redact(variant) == variant:
                missed.append((rule.name, variant))
    assert missed == []
