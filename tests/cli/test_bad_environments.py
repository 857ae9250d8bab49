"""Every CLI command in every broken environment: one line with the next step, a non-zero exit,
no traceback, no password.

The commands are enumerated from the click group (subcommands included, required arguments
filled from their types), so a new command is covered without editing this file.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from colony_tasks.cli import cli

SECRET = "s3cret-pw"


def leaf_commands() -> Iterator[list[str]]:
    """The argv of every runnable command, required arguments filled with plausible values."""

    def walk(command: click.Command, path: list[str]) -> Iterator[list[str]]:
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            if path and command.invoke_without_command:
                yield path
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                yield from walk(sub, [*path, name])
            return
        argv = list(path)
        for param in command.params:
            if param.required and isinstance(param, click.Argument):
                if isinstance(param.type, click.Choice):
                    argv.append(str(param.type.choices[0]))
                else:
                    argv.append("1" if isinstance(param.type, click.types.IntParamType) else "x")
        if path == ["viewer"]:
            argv += ["--port", "0"]
        yield argv

    return walk(cli, [])


COMMANDS = list(leaf_commands())


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again when the block ends: nothing listens


def corrupt_database(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home.mkdir()
    (home / "colony.db").write_bytes(b"this is not a database, " * 400)


def home_is_a_file(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home.write_text("not a folder\n")


def team_unreachable(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"postgresql://alice:{SECRET}@127.0.0.1:{closed_port()}/colony"
    monkeypatch.setenv("COLONY_TASKS_DATABASE_URL", url)


def team_extra_missing(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    team_unreachable(home, monkeypatch)
    # As if pg8000 were not installed: the import of the driver fails, wherever it happens.
    monkeypatch.setitem(sys.modules, "pg8000", None)
    monkeypatch.setitem(sys.modules, "pg8000.dbapi", None)
    for name in [m for m in sys.modules if m.startswith("colony_tasks.store.pg")]:
        if name != "colony_tasks.store.pg_schema":
            monkeypatch.delitem(sys.modules, name)
    for name in [m for m in sys.modules if m.startswith("colony_tasks.relay.team")]:
        monkeypatch.delitem(sys.modules, name)


def unsupported_scheme(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_TASKS_DATABASE_URL", f"mysql://alice:{SECRET}@db.example/colony")


def misspelt_sslmode(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"postgresql://alice:{SECRET}@127.0.0.1:{closed_port()}/colony?sslmode=verify_full"
    monkeypatch.setenv("COLONY_TASKS_DATABASE_URL", url)


# Each broken environment and words its one line must contain (what is wrong, what to do).
ENVIRONMENTS: dict[str, tuple[Callable[[Path, pytest.MonkeyPatch], None], tuple[str, ...]]] = {
    "corrupt database": (corrupt_database, ("cannot be opened as a SQLite database", "aside")),
    "home is a file": (home_is_a_file, ("is a file, not a folder", "point it at a folder")),
    "team store unreachable": (team_unreachable, ("Cannot reach the team store", "Start")),
    "team extra missing": (team_extra_missing, ("pg8000", "'.[team]'")),
    "unsupported scheme": (unsupported_scheme, ("mysql://", "use a postgresql:// URL")),
    "misspelt sslmode": (misspelt_sslmode, ("Unknown sslmode 'verify_full'", "verify-full")),
}

# Commands that do not need the store may succeed in an environment that breaks it; the set
# is explicit so that a command which silently stopped failing is noticed.
STORELESS = {("chain",), ("plan",), ("install",), ("uninstall",)}
# The relay's status and stop read this machine's relay (and outbox), not the store.
STORELESS |= {("relay",), ("relay", "status"), ("relay", "stop")}
# The git guard in warn mode (the default, as here) lets a commit through when it cannot read
# the store; block mode stops it (tests/usecases/test_commit_guard.py, docs/lifecycle.md).
STORELESS |= {("guard", "pre-commit")}


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request) -> str:
    make, _ = ENVIRONMENTS[request.param]
    home = tmp_path / "colony-home"
    monkeypatch.setenv("COLONY_TASKS_HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))  # install/uninstall touch no real config
    monkeypatch.delenv("COLONY_TASKS_DATABASE_URL", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    # Never start a server in this test: reaching them means the command did not fail first.
    from colony_tasks.mcp_server import server as mcp_server
    from colony_tasks.viewer import server as viewer_server

    def refuse(*args, **kwargs):
        raise AssertionError("a server started in a broken environment")

    monkeypatch.setattr(mcp_server, "serve", refuse)
    monkeypatch.setattr(viewer_server, "serve", refuse)
    make(home, monkeypatch)
    return request.param


def test_the_table_covers_every_command():
    names = {
        tuple(argv[:2]) if argv[0] in ("chain", "plan", "relay", "tasks") else (argv[0],)
        for argv in COMMANDS
    }
    assert {("tasks", "show"), ("plan", "take"), ("viewer",), ("mcp",), ("doctor",)} <= names
    assert len(COMMANDS) >= 30


@pytest.mark.parametrize("broken", list(ENVIRONMENTS), indirect=True)
@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_command_fails_in_one_line_with_the_next_step(argv: list[str], broken: str):
    result = CliRunner().invoke(cli, argv)
    assert not isinstance(result.exception, AssertionError), result.exception
    output = result.output  # stdout and stderr, as the user sees them
    assert "Traceback" not in output and SECRET not in output
    if result.exit_code == 0:
        assert tuple(argv) in STORELESS, f"{argv} succeeded: {result.output}"
        return
    assert result.exit_code == 1, (result.exit_code, result.exception, output)
    # One line: an error (stderr), or doctor's single failed check (its report, on stdout).
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(("Error: ", "✗ ")), output
    words = ENVIRONMENTS[broken][1]
    for word in words:
        assert word in lines[0], (word, lines[0])


def test_unsupported_url_creates_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from colony_tasks.base.errors import Misconfigured
    from colony_tasks.store import open_store

    monkeypatch.chdir(tmp_path)
    with pytest.raises(Misconfigured, match="mysql://"):
        open_store(f"mysql://alice:{SECRET}@db.example/colony")
    assert list(tmp_path.iterdir()) == []


def test_doctor_and_cli_word_a_damaged_database_alike(tmp_path: Path, monkeypatch):
    from colony_tasks.install import doctor

    corrupt_database(tmp_path / "home", monkeypatch)
    path = str(tmp_path / "home" / "colony.db")
    store, failure = doctor.open_for_doctor(path)
    assert store is None and failure is not None
    monkeypatch.setenv("COLONY_TASKS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("COLONY_TASKS_DATABASE_URL", raising=False)
    result = CliRunner().invoke(cli, ["status"])
    assert result.output.strip() == f"Error: {failure['detail']}"


@pytest.mark.parametrize("broken", ["unsupported scheme", "misspelt sslmode"], indirect=True)
def test_relay_status_refuses_a_url_no_store_could_use_and_makes_no_outbox(
    broken: str, tmp_path: Path
):
    result = CliRunner().invoke(cli, ["relay", "status"])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: ") and SECRET not in result.output
    assert not list(tmp_path.glob("colony-home/outbox-*"))
