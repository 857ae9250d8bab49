"""Coverage of gitleaks' provider list (names only; see tests/support/provider_tokens.py)."""

from __future__ import annotations

from colony_tasks.base import redact
from colony_tasks.base.redact_rules import RULES
from tests.support.provider_tokens import (
    CONTEXTUAL,
    GITLEAKS_IDS,
    GITLEAKS_PREFIXED,
    NOT_COVERED,
    PREFIXED,
    contextual_text,
)

RULE_NAMES = {rule.name for rule in RULES}


def test_every_gitleaks_rule_is_accounted_for_once():
    groups = [set(GITLEAKS_PREFIXED), set(CONTEXTUAL), set(NOT_COVERED)]
    assert sum(len(g) for g in groups) == len(GITLEAKS_IDS) >= 200
    assert set(GITLEAKS_PREFIXED.values()) <= RULE_NAMES


def test_each_prefixed_token_is_replaced_whole_where_it_is_glued_or_quoted():
    for name, token in PREFIXED.items():
        for text in (f"use {token} now", f'"{token}"', f"TOKEN={token}", f"令牌{token}。"):
            cleaned = redact.redact(text)
            assert token not in cleaned, (name, text)
            assert token[-12:] not in cleaned, (name, text)


def test_contextual_provider_keys_are_caught_by_the_assignment_grammar():
    missed = []
    for seed, (gid, (keyword, kind, length)) in enumerate(CONTEXTUAL.items()):
        value, text = contextual_text(keyword, kind, length, seed)
        if value in redact.redact(text):
            missed.append(gid)
    assert missed == []


def test_coverage_of_the_gitleaks_list_is_at_least_95_percent():
    covered = len(GITLEAKS_PREFIXED) + len(CONTEXTUAL)
    assert covered / len(GITLEAKS_IDS) >= 0.95
