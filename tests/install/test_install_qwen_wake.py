"""`colony-tasks install --agent qwen` adds the background Stop wait that wakes an idle Qwen
Code session through its cross-session inbox, and says what that needs from the user's Qwen
settings; doctor notes a setting that keeps the wake out. Install changes no Qwen setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from colony_tasks.cli.app import cli
from colony_tasks.install import gemini, status


@pytest.fixture
def home(user_home: Path) -> Path:
    return user_home


def _settings(home: Path) -> dict:
    return json.loads((home / ".qwen" / "settings.json").read_text())


def _qwen_notes() -> list[str]:
    return [n for n in status.report(None)[1] if n.startswith("Qwen Code:")]


def test_install_adds_the_background_wait_and_sets_nothing_of_qwens(home: Path):
    result = CliRunner().invoke(cli, ["install", "--agent", "qwen"])
    assert result.exit_code == 0, result.output
    assert gemini.QWEN_WAKE_NEEDS.split(" (")[0] in " ".join(result.output.split())
    settings = _settings(home)
    assert "agents" not in settings
    stop = [h for group in settings["hooks"]["Stop"] for h in group["hooks"]]
    (wait,) = [h for h in stop if " hook wait " in h["command"] + " "]
    assert wait["async"] is True and wait["command"].endswith("hook wait --agent qwen")
    # Qwen reads 1000 and more as milliseconds: the wait's day, not 86 seconds.
    assert wait["timeout"] == 24 * 3600 * 1000
    assert status.missing_events(home / ".qwen" / "settings.json", "qwen") == []
    assert _qwen_notes() == []


def test_an_install_without_the_wait_is_reported_as_older(home: Path):
    CliRunner().invoke(cli, ["install", "--agent", "qwen"])
    path = home / ".qwen" / "settings.json"
    settings = _settings(home)
    for group in settings["hooks"]["Stop"]:
        group["hooks"] = [h for h in group["hooks"] if "hook wait" not in h["command"]]
    path.write_text(json.dumps(settings))
    assert status.missing_events(path, "qwen") == [status.WAIT_NAME]


@pytest.mark.parametrize(
    ("agents", "blocked"),
    [
        ({"crossSessionInbound": "refuse"}, 'agents.crossSessionInbound is "refuse"'),
        ({"crossSessionInbound": "hold"}, 'agents.crossSessionInbound is "hold"'),
        ({"crossSessionMessaging": False}, "agents.crossSessionMessaging is false"),
        ({"crossSessionInbound": "accept"}, None),
        ({"crossSessionMessaging": True}, None),
    ],
)
def test_doctor_notes_a_qwen_setting_that_keeps_the_wake_out(home: Path, agents, blocked):
    CliRunner().invoke(cli, ["install", "--agent", "qwen"])
    path = home / ".qwen" / "settings.json"
    path.write_text(json.dumps({**_settings(home), "agents": agents}))
    notes = _qwen_notes()
    if blocked is None:
        assert notes == []
    else:
        assert notes == [
            f"Qwen Code: {blocked} in {path}, so colony-tasks cannot wake an idle session;"
            f" waking needs {gemini.QWEN_WAKE_NEEDS}."
        ]
