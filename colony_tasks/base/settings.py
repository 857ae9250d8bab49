"""User settings: ``settings.json`` under the data folder. Standard library only.

Keys (all optional)::

    {"claims": {"mode": "warn" | "block"},   # block: a live conflict denies the edit
     "git_guard": {"mode": "warn" | "block"},  # block: the pre-commit guard stops the commit
     "search": {"embedder": "minilm" | "static" | "minilm-torch" | "none"},
     "chains": {"loop_limit": 8},
     "wake": {"enabled": true, "off_repos": []}}  # waking idle sessions (wake.py)
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
    "wake": {"enabled": True, "off_repos": []},
}


def load() -> dict[str, Any]:
    """Settings merged over the defaults; a missing or malformed file gives the defaults."""
    merged = {key: dict(value) for key, value in DEFAULTS.items()}
    try:
        with open(paths.settings_path(), encoding="utf-8") as handle:
            user = json.load(handle)
    except (OSError, ValueError):
        return merged
    if isinstance(user, dict):
        for section, values in user.items():
            if isinstance(values, dict) and isinstance(merged.get(section), dict):
                merged[section].update(values)
    return merged


def get(section: str, key: str) -> Any:
    return load().get(section, {}).get(key)
