"""Rules with anchors are tried only where an anchor occurs: this holds only if every match
of the rule starts at one, which these tests check on every example of such a rule, and on
the examples run together (where an anchor's hit may fall inside an earlier match)."""

from __future__ import annotations

import re

import pytest

from colony_tasks.base.redact import _compile, apply_rule
from colony_tasks.base.redact_rules import RULES
from tests.base.test_redaction_rules import EXAMPLES

ANCHORED = [rule for rule in RULES if rule.anchors]


def test_the_slow_rules_have_anchors():
    names = {rule.name for rule in ANCHORED}
    assert {"label-ascii", "label-other", "cli-short-p", "cli-oracle-login"} <= names
    # those that start with an alternation of words
    assert {"env-keyword", "cli-stdin-pipe", "cli-secret-store", "sql-password"} <= names


@pytest.mark.parametrize("rule", ANCHORED, ids=lambda rule: rule.name)
def test_every_match_starts_at_an_anchor(rule):
    (pattern,), _, _ = _compile(rule)
    example = EXAMPLES[rule.name][0]
    texts = [example, f"{example} {example}\n{example}"]
    matched = 0
    for text in [*texts, *(t.upper() for t in texts), *(t.title() for t in texts)]:
        hay = text if rule.cased else text.lower()  # (a cased rule's anchors, as written)
        for match in pattern.finditer(text):
            matched += 1
            assert any(hay.startswith(a, match.start()) for a in rule.anchors), match
    assert matched


def test_cased_anchors_hold_no_blank_and_the_case_insensitive_rules_are_not_cased():
    cased = [rule for rule in ANCHORED if rule.cased]
    assert {"env-keyword", "cli-short-p", "cli-stdin-pipe"} <= {rule.name for rule in cased}
    assert not any(c.isspace() for rule in cased for a in rule.anchors for c in a)
    assert not any(rule.cased for rule in ANCHORED if rule.name.startswith("label-"))


@pytest.mark.parametrize("rule", ANCHORED, ids=lambda rule: rule.name)
def test_tried_at_anchors_it_replaces_what_a_full_pass_does(rule):
    (pattern,), marker, _ = _compile(rule)
    example = EXAMPLES[rule.name][0]
    text = f"\n{example} ;\n{example} {example}\n" + rule.anchors[0] * 3
    keep = "\\g<keep>" if "keep" in pattern.groupindex else ""
    expected = pattern.sub(keep + marker.replace("\\", "\\\\"), text)
    assert apply_rule(rule, text) == expected != text
    assert len(re.findall(r"\[REDACTED:", expected)) >= 3
