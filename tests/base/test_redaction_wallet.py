"""Recovery phrases: the BIP-39 list is the published one, runs of its words are replaced,
prose is not, and the search grows linearly on adversarial runs of short words."""

from __future__ import annotations

import hashlib

from colony_tasks.base import redact
from colony_tasks.base.redact_bip39 import WORDS
from colony_tasks.base.redact_phrases import MARKER, redact_mnemonics
from tests.base.test_redaction_linear import growth

PHRASE = "legal winner thank year wave sausage worth useful legal winner thank yellow"


def test_the_word_list_is_bip39_english():
    words = WORDS.split()
    digest = hashlib.sha256(("\n".join(words) + "\n").encode()).hexdigest()
    assert digest == "2f5eed53a4727b4bf8880d8f3f199efc90e58503646d9ff8eff3a2ed3b24dbda"


def test_a_phrase_is_replaced_whole_and_prose_is_left():
    assert redact.redact(f"seed: {PHRASE}.") == f"seed: {MARKER}."
    assert redact.redact(PHRASE) == MARKER
    eleven = " ".join(PHRASE.split()[:11])
    assert redact.redact(eleven) == eleven
    prose = "the old man gave the young boy a cake and a map of the city " * 3
    assert redact.redact(prose) == prose


def test_runs_of_short_words_are_searched_in_linear_time():
    for unit in ("legal winner ", "abc " * 11 + "abcdefghij ", "zzz " * 30 + ". "):
        assert growth(redact_mnemonics, unit) < 40, unit
