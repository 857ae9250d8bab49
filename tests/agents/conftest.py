"""Fixtures for the real-agent suite (marker ``agents``): the installed CLIs and a sandbox."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .sandbox import Sandbox
from .toolchain import Toolchain, Unavailable, install, wanted_versions

_USED: list[Toolchain] = []


@pytest.fixture(scope="session")
def toolchain() -> Toolchain:
    if os.environ.get("COLONY_TASKS_AGENTS") == "skip":
        pytest.skip("COLONY_TASKS_AGENTS=skip: the real-agent suite was turned off on purpose")
    try:
        found = install(wanted_versions())
    except Unavailable as reason:
        pytest.skip(f"the agent CLIs are unavailable: {reason}")
    _USED.append(found)
    return found


@pytest.fixture
def sandbox(tmp_path: Path, toolchain: Toolchain) -> Iterator[Sandbox]:
    box = Sandbox(tmp_path, toolchain)
    yield box
    box.stop_all()


def pytest_report_header(config) -> str | None:
    if os.environ.get("COLONY_TASKS_AGENT_VERSIONS") == "latest":
        return "agent CLIs: the newest published versions (make agents-latest)"
    return None


def pytest_terminal_summary(terminalreporter) -> None:
    for toolchain in _USED:
        terminalreporter.write_line(f"agent CLIs under test: {toolchain.describe()}")
