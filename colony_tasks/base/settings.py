"""User settings: ``settings.json`` under the data folder. Standard library only.

Keys (all optional)::

    {"claims": {"mode": "warn" | "block"},   # block: a live conflict denies the edit
     "git_guard": {"mode": "warn" | "block"},  # block: the pre-commit guard stops the commit
     "search": {"embedder": "minilm" | "static" | "minilm-torch" | "none"},
     "chains": {"loop_limit": 8},
     "wake": {"enabled": true, "off_repos": [],  # waking idle sessions (wake.py)
              "per_minute": 4, "per_sender_per_minute": 2}}  # wakes of one recipient
"""

from __future__ import annotations

import json

from . import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULTS: dict[str, Any] = {
    "claims": {"mode": "warn"},
    "git_guard": {"mode": "warn"},
    "search": {"embedder": "minilm"},
    "chains": {"loop_limit": 8},
    "wake": {"enabled": True, "off_repos": [], "per_minute": 4, "per_sender_per_minute": 2},
}


class Unreadable(Exception):
    """settings.json exists but is not a JSON object (the message says what is wrong)."""


def load() -> dict[str, Any]:
    """Settings merged over the defaults; a missing or malformed file gives the defaults."""
    try:
        return load_checked()
    except Unreadable:
        return {key: dict(value) for key, value in DEFAULTS.items()}


def load_checked() -> dict[str, Any]:
    """Settings merged over the defaults (a missing file gives the defaults); raises
    :class:`Unreadable` when the file exists but cannot be read as a JSON object. For a
    caller that must not mistake a broken file for the defaults (the git guard in block
    mode)."""
    merged = {key: dict(value) for key, value in DEFAULTS.items()}
    path = paths.settings_path()
    try:
        with open(path, encoding="utf-8") as handle:
            user = json.load(handle)
    except (FileNotFoundError, NotADirectoryError):  # no such file
        return merged
    except OSError as error:
        raise Unreadable(f"{path} cannot be read ({error.strerror})") from None
    except ValueError as error:
        raise Unreadable(f"{path} is not valid JSON ({error})") from None
    if not isinstance(user, dict):
        raise Unreadable(f"{path} is not a JSON object")
    for section, values in user.items():
        if isinstance(values, dict) and isinstance(merged.get(section), dict):
            merged[section].update(values)
    return merged


def get(section: str, key: str) -> Any:
    return load().get(section, {}).get(key)
