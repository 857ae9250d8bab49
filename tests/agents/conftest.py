"""Fixtures for the real-agent suite (marker ``agents``): the installed CLIs, a sandbox, and
for the plugin routes a local clone of the checkout and a wheelhouse for the plugin's build."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .sandbox import Sandbox
from .toolchain import Toolchain, Unavailable, install, wanted_versions
from .wheelhouse import build

CHECKOUT = Path(__file__).resolve().parents[2]

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


@pytest.fixture(scope="session")
def clone(tmp_path_factory) -> Path:
    """The checkout's tracked files as they are now (a local clone, without .venv)."""
    target = tmp_path_factory.mktemp("clone") / "colony-tasks"
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=CHECKOUT, capture_output=True, check=True
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = CHECKOUT / name
        if not source.is_symlink() and not source.exists():
            continue  # deleted in the working tree, not yet committed
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / name, follow_symlinks=False)
    return target


@pytest.fixture(scope="session")
def wheels(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("wheelhouse")
    build(folder)
    return folder


def pytest_report_header(config) -> str | None:
    if os.environ.get("COLONY_TASKS_AGENT_VERSIONS") == "latest":
        return "agent CLIs: the newest published versions (make agents-latest)"
    return None


def pytest_terminal_summary(terminalreporter) -> None:
    for toolchain in _USED:
        terminalreporter.write_line(f"agent CLIs under test: {toolchain.describe()}")
