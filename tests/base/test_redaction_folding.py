"""Folding in long texts: the folded copies of every window are checked at once, and only the
chunks that check changes are redacted one by one."""

from __future__ import annotations

import random
import re

import pytest

from colony_tasks.base import redact, redact_fold

HARMLESS = 'ｆｕｌｌ ｗｉｄｔｈ zero\u200bwidth soft\u00adhyphen café \\"quoted\\" 修复 test\n'
FILLER = "def handler(event):\n    return process(event)\n"


def long_text(secret_line: str, separator: str = "") -> str:
    lines = []
    for i in range(4000):
        lines.append(HARMLESS if i % 3 == 0 else FILLER)
        if i == 2001:
            lines.append(secret_line)
        if separator and i == 100:
            lines.append(separator)
    return "".join(lines)


@pytest.mark.parametrize(
    "secret_line",
    [
        "db pass\u200bword=Hunter2Xq9ZrT\n",
        "ｐａｓｓｗｏｒｄ：Hunter2Xq9ZrT\n",
        'cfg = "{\\"password\\": \\"Hunter2Xq9ZrT\\"}"\n',
        "export DB_PASSWORD=\\\n    Hunter2Xq9ZrT\n",
    ],
)
@pytest.mark.parametrize("separator", ["", "a\x00b\n"])
def test_one_revealed_secret_among_many_harmless_fold_sites_is_replaced(secret_line, separator):
    text = long_text(secret_line, separator)
    assert len(text) > redact.LONG_TEXT
    cleaned = redact.redact(text)
    assert "Hunter2Xq9ZrT" not in cleaned
    # nothing else changes: every harmless line comes back as it was
    assert cleaned.count(HARMLESS) == text.count(HARMLESS)
    assert cleaned.count(FILLER) == text.count(FILLER)


def test_harmless_fold_sites_leave_a_long_text_exactly_as_it_was():
    text = long_text("")
    assert redact.redact(text) == text


def test_the_site_scan_finds_what_folding_changes():
    # a dash glued to ASCII folds to itself: no site; invisible, compatibility, escapes are
    assert list(redact_fold.fold_sites("a\u2014b x\u2014y")) == []
    text = 'naïve ab\u200bc ｘ 密钥abc x\\"y'
    sites = [text[a:b] for a, b, _ in redact_fold.fold_sites(text)]
    assert "\u200b" in sites and "ｘ" in sites and "\\" in sites
    folded = redact.folded_text(text)
    assert folded is not None and re.search("abc", folded)
    assert redact.folded_text(text) == redact.fold(text)[0]  # type: ignore[index]


def test_the_guard_of_the_site_scan_changes_none_of_its_matches():
    # the guard tests at once what each branch needs: the scan with it finds what the scan
    # without it finds, on text dense with every kind of site and near miss
    guarded = re.compile(redact_fold._FOLDABLE)
    unguarded = re.compile(redact_fold._FIRST + redact_fold._BRANCHES)
    assert redact_fold._GUARD in guarded.pattern
    pieces = "aZ9K \\\"'\nu0x7\r\t\u0430\u0410\u200b\uff50\u00a0\u4e00\u00e9\u3000\u2014"
    rng = random.Random(7)
    for _ in range(200):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 400)))
        found = [(m.span(), m.group("letters")) for m in guarded.finditer(text)]
        assert found == [(m.span(), m.group("letters")) for m in unguarded.finditer(text)]


def test_the_site_scan_folds_each_run_as_its_neighbours_make_fold_fold_it():
    # a run is looked up by itself when its neighbours cannot change what it folds to, and by
    # them too when they can (é between ASCII letters gets blanks, alone it does not): the
    # scan's folded text is fold()'s, whatever neighbours the same run had before
    pieces = [
        "a",
        "Z",
        "9",
        " ",
        "\n",
        "é",
        "ï",
        "密",
        "\u0430",
        "\uff50",
        "\u200b",
        "\\",
        '"',
        "—",
    ]
    rng = random.Random(11)
    for _ in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 60)))
        folded = redact_fold.fold(text)
        assert redact_fold.folded_sites(text)[1] == (text if folded is None else folded[0])
