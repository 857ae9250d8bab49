"""Fixtures the installer's tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

#: The console script every installer test installs (never run: only written into files).
EXE = "/opt/venv-a/bin/colony-tasks"
#: The variables that move a client's configuration away from ``$HOME``.
CLIENT_HOMES = ("COPILOT_HOME", "QWEN_HOME", "XDG_CONFIG_HOME", "COLONY_TASKS_HOME")


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ``$HOME`` (no client folder yet), the working folder a repository's root beside
    it, and :data:`EXE` as the command the installer writes."""
    home = tmp_path / "home"
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    home.mkdir()
    for name in CLIENT_HOMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path / "repo")
    monkeypatch.setattr("colony_tasks.install.plan.find_executable", lambda: EXE)
    return home
