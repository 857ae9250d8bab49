"""How a text another party wrote is shown (colony_tasks.base.text): controls made visible,
invisible format characters removed, line breaks kept or folded, the JSON way of the same."""

from __future__ import annotations

import json
import sys
import unicodedata

import pytest

from colony_tasks.base.text import clip, escape_unsafe, fence, fenced, one_line


def test_terminal_escapes_are_shown_as_control_pictures_and_cannot_act():
    osc52 = "\x1b]52;c;ZWNobyBwd25lZAo=\x07"
    assert fence(osc52) == "␛]52;c;ZWNobyBwd25lZAo=␇"
    assert fence("\x1b]8;;https://evil.example/\x1b\\x") == "␛]8;;https://evil.example/␛\\x"
    assert fence("a\x00b\x7fc\x9b2J") == "a␀b␡c\ufffd2J"


def test_bidi_zero_width_and_tag_characters_are_removed():
    assert fence("invoice\u202egpj.exe") == "invoicegpj.exe"
    assert fence("\u2066a\u2069\u200bb\u200c\u200d\u2060\ufeffc") == "abc"
    assert fence("hi\U000e0069\U000e0067\U000e006e") == "hi"  # ASCII smuggled in tag chars


def test_every_line_break_becomes_one_newline_and_a_one_line_field_keeps_none():
    text = "a\r\nb\rc\u2028d\u2029e\x85f\x0bg\x0ch"
    assert fence(text) == "a\nb\nc\nd\ne\nf\ng\nh"
    assert one_line("ok\ncolony-tasks: FAKE\r\n  x\t y") == "ok colony-tasks: FAKE x y"


@pytest.mark.parametrize(
    "text",
    [
        "Grüße, привет, 你好, こんにちは, مرحبا, שלום, नमस्ते, 안녕하세요",
        "emoji 👍 🎉 ❤️ 🇫🇷 👨🏽",
        "path/to/file.py → done … “quoted”",
    ],
)
def test_letters_of_every_script_and_emoji_are_kept(text):
    assert fence(text) == text and one_line(text) == text


def test_every_control_and_format_character_unicode_knows_is_neutralised():
    kept = "\n\t"
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if unicodedata.category(char) in ("Cc", "Cf") and char not in kept:
            shown = one_line(f"a{char}b")
            assert char not in shown, f"U+{code:04X} ({unicodedata.name(char, '?')})"


def test_clip_folds_fences_then_cuts_with_an_ellipsis():
    assert clip("a\x1b[2J" + "x" * 50, 10) == "a␛[2Jxxxx…"
    assert clip(None) == ""


def test_fenced_json_data_fences_every_string_and_keeps_the_rest():
    data = {"t\u202e": ["a\x07", 3, None, {"b": "c\u200b"}], "n": 1.5, "ok": True}
    assert fenced(data) == {"t": ["a␇", 3, None, {"b": "c"}], "n": 1.5, "ok": True}


def test_escaped_json_text_is_the_same_data_with_nothing_raw_in_it():
    data = {"a": "x\x1b]52\x07\u202e\U000e0069\x9b\u2028\x7f ok é 👍 中"}
    text = escape_unsafe(json.dumps(data, ensure_ascii=False))
    assert json.loads(text) == data
    assert fence(text) == text and "é 👍 中" in text
