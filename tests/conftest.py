from __future__ import annotations

import os
from pathlib import Path

import pytest

from colony_tasks.store import Store


class Clock:
    """An injectable clock: tests move time forward instead of sleeping."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "colony-home"
    monkeypatch.setenv("COLONY_TASKS_HOME", str(folder))
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the fallback hook log, per test
    return folder


@pytest.fixture
def store(tmp_path: Path, clock: Clock):
    db = Store(tmp_path / "colony.db", clock=clock)
    yield db
    db.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository with one commit on branch main."""
    from tests.gitutil import make_repo

    return make_repo(tmp_path / "proj")


def pytest_configure(config):
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
