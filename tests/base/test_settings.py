"""settings.json: the lenient reading every front end uses, and the checked one for callers
that must not mistake a broken file for the defaults (the git guard in block mode)."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony_tasks.base import settings


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "", "\xff\xfe"])
def test_a_broken_file_gives_the_defaults_but_the_checked_reading_says_why(home: Path, text):
    home.mkdir()
    (home / "settings.json").write_bytes(text.encode("latin-1"))
    assert settings.load() == settings.DEFAULTS
    with pytest.raises(settings.Unreadable, match="settings.json"):
        settings.load_checked()


def test_a_missing_file_is_the_defaults_for_both_readings(home: Path):
    assert settings.load_checked() == settings.load() == settings.DEFAULTS
    home.write_text("a file where the data folder should be\n")
    assert settings.load_checked() == settings.DEFAULTS


def test_a_valid_file_is_merged_over_the_defaults(home: Path):
    home.mkdir()
    (home / "settings.json").write_text('{"git_guard": {"mode": "block"}}')
    assert settings.load_checked()["git_guard"] == {"mode": "block"}
    assert settings.load()["claims"] == {"mode": "warn"}
