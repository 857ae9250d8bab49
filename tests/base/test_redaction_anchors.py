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
    for text in texts:
        lowered = text.lower()
        for match in pattern.finditer(text):
            matched += 1
            assert any(lowered.startswith(a, match.start()) for a in rule.anchors), match
    assert matched


@pytest.mark.parametrize("rule", ANCHORED, ids=lambda rule: rule.name)
def test_tried_at_anchors_it_replaces_what_a_full_pass_does(rule):
    (pattern,), marker, _ = _compile(rule)
    example = EXAMPLES[rule.name][0]
    text = f"\n{example} ;\n{example} {example}\n" + rule.anchors[0] * 3
    keep = "\\g<keep>" if "keep" in pattern.groupindex else ""
    expected = pattern.sub(keep + marker.replace("\\", "\\\\"), text)
    assert apply_rule(rule, text) == expected != text
    assert len(re.findall(r"\[REDACTED:", expected)) >= 3
