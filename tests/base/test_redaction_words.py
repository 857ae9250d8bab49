"""Long texts ask the rules' words of their distinct words (colony_tasks/base/redact_words.py),
and fold windows are built without a Python step per site: the answers must be those of the
whole text, and the windows and folded copies those of the plain loops they replaced."""

from __future__ import annotations

import random
import re

import pytest

from colony_tasks.base import redact, redact_fold
from colony_tasks.base.redact_rules import RULES
from colony_tasks.base.redact_words import Words
from tests.base.redaction_dev_r7 import DEV, DEV_LOOKALIKES
from tests.support.nonsecret_corpus import NONSECRETS
from tests.support.secret_corpus import CORPUS
from tests.support.secret_heldout import HELDOUT

RULE_WORDS = sorted({w for rule in RULES for w in (*rule.triggers, *rule.anchors, *rule.needs)})
TEXTS = [
    *(text for _, text in CORPUS),
    *(text for *_, text in HELDOUT),
    *(text for *_, text in DEV),
    *DEV_LOOKALIKES,
    *NONSECRETS,
    "mot\u00a0de passe: x",  # a blank that split() cuts at and the trigger does not hold
    "ΚΩΔΙΚΟΣ: x κωδικός",  # final sigma
    "ключ\u3000api = x",
    "",
]


@pytest.mark.parametrize("joiner", ["\n", " ", "\t\u2003"])
def test_every_rule_word_is_found_in_the_distinct_words_exactly_when_in_the_text(joiner):
    lowered = joiner.join(TEXTS).lower()
    words = Words(lowered, distinct=True)
    assert words._distinct != lowered  # (the distinct words are what is asked)
    wrong = [w for w in RULE_WORDS if (w in words) != (w in lowered)]
    assert wrong == []


def test_each_text_alone_gets_the_answers_of_a_plain_search():
    for text in TEXTS:
        lowered = text.lower()
        words = Words(lowered, distinct=True)
        assert [w for w in RULE_WORDS if (w in words) != (w in lowered)] == [], text


def test_a_word_a_rule_put_in_the_text_counts_as_present():
    words = Words("nothing here", distinct=True)
    assert "redacted" not in words
    words.add("[redacted:password]")
    assert "redacted" in words
    assert "password" in words
    assert "token" not in words


def test_a_long_text_whose_trigger_has_blanks_is_still_redacted():
    filler = "ordinary words and code(x) = 1\n" * (redact.LONG_TEXT // 30 + 1)
    text = filler + "Le mot de passe: Gx7pLq2Vw9\n" + filler
    assert "Gx7pLq2Vw9" not in redact.redact(text)
    # the words of the trigger apart, never together: nothing to replace
    apart = filler + "mot\nde\npasse: Gx7pLq2Vw9\n" + filler
    assert redact.redact(apart) == apart


def _windows_reference(text, sites):
    """fold_windows as it was written first: one step per site."""
    spans: list[list[int]] = []
    for at, end, _ in sites:
        a, b = max(at - redact_fold.FOLD_WINDOW, 0), min(end + redact_fold.FOLD_WINDOW, len(text))
        if spans and a <= spans[-1][1]:
            spans[-1][1] = b
        else:
            spans.append([a, b])
    windows: list[tuple[int, int]] = []
    kept_from = 0
    for a, b in spans:
        a = max(text.rfind("\n", 0, a) + 1 if a else 0, kept_from)
        b = text.find("\n", b) if b < len(text) else len(text)
        b = len(text) if b < 0 else b
        if windows and a <= windows[-1][1]:
            windows[-1] = (windows[-1][0], b)
        elif a < b:
            windows.append((a, b))
        kept_from = b
    return windows


def _spliced_reference(text, sites, a, b):
    pieces = []
    last = a
    for at, end, folded in sites:
        pieces += [text[last:at], folded]
        last = end
    return "".join([*pieces, text[last:b]])


@pytest.mark.parametrize("seed", range(40))
def test_windows_and_folded_copies_match_the_plain_loops(seed):
    rng = random.Random(seed)
    size = rng.choice([50, 3000, 20000])
    text = "".join(rng.choice("ab \n\u200bｐé") for _ in range(size))
    sites = redact_fold.fold_sites(text)
    assert sites  # (the alphabet folds)
    gap = rng.choice([1, 500, 3000])
    sites = [s for i, s in enumerate(sites) if i % gap == 0]
    assert redact_fold.fold_windows(text, sites) == _windows_reference(text, sites)
    all_sites, folded = redact_fold.folded_sites(text)
    assert folded == _spliced_reference(text, all_sites, 0, len(text))
    windows = redact_fold.fold_windows(text, all_sites)
    expected = [
        _spliced_reference(text, [s for s in all_sites if a <= s[0] < b], a, b) for a, b in windows
    ]
    assert redact_fold.window_copies(all_sites, folded, windows) == expected
    assert redact_fold.fold_windows(text, []) == []


@pytest.mark.parametrize("extra", [-1, 0, 1, 2, 40])
def test_windows_meet_exactly_where_the_plain_loop_merges_them(extra):
    text = "abcdefghi\n" * 1000
    gap = 2 * redact_fold.FOLD_WINDOW + extra
    sites = [(3000, 3001, "x"), (3001 + gap, 3002 + gap, "y")]
    assert redact_fold.fold_windows(text, sites) == _windows_reference(text, sites)


SHAPED = [rule for rule in RULES if rule.shape]


def test_the_rules_that_start_with_a_common_class_have_shapes():
    assert {"wif-private-key", "vendor-prefixed-token"} <= {rule.name for rule in SHAPED}


@pytest.mark.parametrize("rule", SHAPED, ids=lambda rule: rule.name)
def test_every_match_holds_the_rule_shape_and_no_blank(rule):
    from tests.base.test_redaction_rules import EXAMPLES

    example = EXAMPLES[rule.name][0]
    matched = 0
    for pattern in redact._compile(rule, True)[0]:
        for match in pattern.finditer(f"{example} {example}\n{example}"):
            matched += 1
            assert not any(c.isspace() for c in match.group())
            assert re.search(rule.shape, match.group()), match
    assert matched


@pytest.mark.parametrize("rule", SHAPED, ids=lambda rule: rule.name)
def test_a_long_text_without_the_shape_skips_the_rule_and_with_it_is_redacted(rule):
    from tests.base.test_redaction_rules import EXAMPLES

    example, secret, _ = EXAMPLES[rule.name]
    filler = "ordinary words and code(x) = 1 KL5 key_x\n" * (redact.LONG_TEXT // 40 + 1)
    words = Words(filler.lower(), distinct=True, text=filler)
    assert not words.holds(rule.shape)
    assert secret not in redact.redact(filler + example + "\n" + filler)


def test_a_base64_image_holds_the_lowercase_shape_of_a_wallet_key_but_not_its_own():
    # base58 has no 0, O, I or l: lowercase, a PNG's base64 looks like a key, as written not
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
    filler = f"ordinary words\nimg = '{png}'\n" * 3000
    rule = next(rule for rule in RULES if rule.name == "wif-private-key")
    assert re.search("[5kl][1-9a-z]{50}", filler.lower())
    assert not Words(filler.lower(), distinct=True, text=filler).holds(rule.shape)


def test_words_as_written_are_those_of_the_text_and_of_what_rules_put_in():
    text = "Password = x\n" + "ordinary words, code(x) = 1\n" * 4000
    words = Words(text.lower(), distinct=True, text=text)
    assert words._cased != text  # (the distinct words are what is asked)
    assert words.cased("Password") and not words.cased("PASSWORD")
    assert "password" in words
    words.add("[REDACTED:PASSWORD]")
    assert words.cased("PASSWORD") and "redacted" in words
    assert Words(text.lower(), distinct=True).cased("PASSWORD")  # (no text: no answer)


def test_every_literal_head_starts_every_match_of_its_pattern():
    from tests.base.test_redaction_rules import EXAMPLES

    headed = 0
    for rule in RULES:
        example = EXAMPLES[rule.name][0]
        text = f"\n{example} {example.upper()}\n{example.lower()} {example.title()}\n"
        for pattern in redact._compile(rule, True)[0]:
            head = redact._head(pattern)
            headed += bool(head)
            assert not any(c.isspace() for c in head)
            for match in pattern.finditer(text):
                assert match.group().startswith(head), (rule.name, head, match)
    assert headed > 150


@pytest.mark.parametrize(
    ("source", "head"),
    [
        ("(?P<keep>password[ \t]{0,8}+=)x", "password"),
        ("abc?d", "ab"),
        ("abcd{2}", "abc"),
        ("ab|cd", ""),
        ("(?P<keep>abc|de)f", ""),
        ("(?P<keep>abc)x|y", ""),
        ("(?P<keep>abc(?!x|y))[|]z", "abc"),
        ("abc[|(]d|e", ""),
        ("a\\.b", ""),
        ("key word", "key"),
        ("(?i:abc)", ""),
    ],
)
def test_a_literal_head_is_what_every_match_starts_with_or_nothing(source, head):
    from colony_tasks.base.redact_rules import literal_head

    assert literal_head(source) == head
