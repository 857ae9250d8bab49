from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from colony_tasks.store import open_store


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


# Tests marked ``both_backends`` are the core's contract: one set of tests, two stores. Their
# `store` (and `store_address`, for tests that open the store in other processes) is SQLite
# and a real PostgreSQL server started for the session (tests/support/pgserver.py).
def pytest_generate_tests(metafunc):
    wants = {"store", "store_address"} & set(metafunc.fixturenames)
    if wants and metafunc.definition.get_closest_marker("both_backends"):
        metafunc.parametrize(
            "backend",
            ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
            indirect=True,
        )


@pytest.fixture
def backend(request) -> str:
    return getattr(request, "param", "sqlite")


@pytest.fixture(scope="session")
def pg_server():
    """One PostgreSQL server for the whole session, torn down afterwards."""
    from tests.support.pgserver import PgServer

    bindir = PgServer.find()
    if bindir is None:
        pytest.skip("PostgreSQL binaries are not installed (run `make postgres`)")
    server = PgServer(bindir)
    server.start()
    try:
        # A migrated template: each test process's database starts as a copy of it, and is
        # emptied (TRUNCATE, ~30 ms) rather than recreated (~700 ms) before each test.
        template = open_store(server.create_database("colony_template"))
        template.close()
        server.template = "colony_template"
        yield server
    finally:
        server.destroy()


@pytest.fixture
def pg_url(pg_server) -> str:
    """An empty, migrated database on the session's server (one per test process, emptied
    before each test)."""
    return pg_server.reset_database(f"t{os.getpid()}")


@pytest.fixture
def store_address(backend: str, tmp_path: Path, request) -> str:
    """Where a test's store lives: a SQLite path or a PostgreSQL URL."""
    if backend == "postgresql":
        return request.getfixturevalue("pg_url")
    return str(tmp_path / "colony.db")


@pytest.fixture
def store(store_address: str, clock: Clock):
    db = open_store(store_address, clock=clock)
    yield db
    db.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository with one commit on branch main."""
    from tests.support.gitutil import make_repo

    return make_repo(tmp_path / "proj")


def pytest_configure(config):
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    # Hooks run by the tests start relays (colony_tasks.relay) in each test's data folder;
    # the fixture below ends them, and one a test leaves behind exits soon by itself.
    os.environ.setdefault("COLONY_TASKS_RELAY_IDLE", "20")


def stop_relays(root: Path) -> None:
    """End every relay whose pid file lies under ``root`` and wait for it to go."""
    pids = []
    for pid_file in root.rglob("relay-*.pid"):
        with contextlib.suppress(OSError, ValueError):
            pids.append(int(pid_file.read_text().strip()))
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    for pid in pids:
        while time.monotonic() < deadline and running(pid):
            time.sleep(0.02)


def running(pid: int) -> bool:
    """Whether ``pid`` is still running. A relay that has exited stays a zombie until its
    parent (here, often the system's init) reaps it, which can take seconds; it is gone."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            state = handle.read().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc here: kill(pid, 0) is all there is to go by
    return state not in ("Z", "X")


@pytest.fixture(autouse=True)
def _relays_end_with_their_test(tmp_path: Path) -> Iterator[None]:
    yield
    stop_relays(tmp_path)
