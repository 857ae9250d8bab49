"""`colony-tasks install --agent copilot` writes our Copilot CLI extension (it wakes an idle
session): the file, its exact removal, a foreign file refused, and what install and doctor say
about Copilot's experimental features, which install never turns on."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from colony_tasks.cli.app import cli
from colony_tasks.install import InstallError, run, status
from colony_tasks.install.copilot_extension import MARKER, NOT_LOADED
from tests.install.conftest import EXE


@pytest.fixture
def home(user_home: Path) -> Path:
    return user_home


def extension(home: Path) -> Path:
    return home / ".copilot" / "extensions" / "colony-tasks" / "extension.mjs"


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``folder`` (folders as None): an emptied folder left behind
    shows."""
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
        if ".colony-tasks" not in p.parts
    }


def test_the_extension_runs_the_wait_of_this_install_and_uninstall_leaves_no_trace(home):
    mine = home / ".copilot" / "extensions" / "mine" / "extension.mjs"
    mine.parent.mkdir(parents=True)
    mine.write_text("export {}\n")
    (home / ".copilot" / "hooks").mkdir()  # the hook file's folder is Copilot's (kept)
    before = tree(home)
    run("install", ["copilot"], "user", command=EXE)
    text = extension(home).read_text()
    assert text.startswith(MARKER)
    assert f"const COMMAND = {json.dumps(EXE)}" in text and "__COMMAND__" not in text
    assert '["hook", "wait", "--agent", "copilot"]' in text
    again = run("install", ["copilot"], "user", command=EXE)
    assert [c.status for c in again.changes] == ["unchanged"] * len(again.changes)
    run("uninstall", ["copilot"], "user")
    assert tree(home) == before  # our folder gone too; the user's extension untouched


def test_a_project_install_writes_no_extension(home):
    run("install", ["copilot"], "project", command=EXE)
    assert not (home / ".copilot").exists()
    assert not (home.parent / "repo" / ".github" / "extensions").exists()


def test_an_extension_folder_of_our_name_we_did_not_write_is_refused(home):
    extension(home).parent.mkdir(parents=True)
    extension(home).write_text("export const mine = 1\n")
    with pytest.raises(InstallError, match="not written by colony-tasks"):
        run("install", ["copilot"], "user", command=EXE)
    with pytest.raises(InstallError, match="not written by colony-tasks"):
        run("uninstall", ["copilot"], "user")
    assert extension(home).read_text() == "export const mine = 1\n"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_generated_extension_is_valid_javascript(home):
    run("install", ["copilot"], "user", command=EXE)
    checked = subprocess.run(
        ["node", "--check", str(extension(home))], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stderr


def test_install_and_doctor_say_when_copilot_would_not_load_it(home):
    result = CliRunner().invoke(cli, ["install", "--agent", "copilot"])
    assert result.exit_code == 0, result.output
    assert " ".join(NOT_LOADED.split()[:6]) in " ".join(result.output.split())
    assert not (home / ".copilot" / "settings.json").exists()  # nothing turned on for the user
    _, notes = status.report(None)
    assert [n for n in notes if NOT_LOADED in n] == [
        f"{extension(home)} is installed, but {NOT_LOADED}"
    ]
    (home / ".copilot" / "settings.json").write_text('{"experimental": true}\n')
    _, notes = status.report(None)
    assert not [n for n in notes if NOT_LOADED in n]
    result = CliRunner().invoke(cli, ["install", "--agent", "copilot"])
    assert "wakes an idle session (experimental)" in result.output
    assert NOT_LOADED.split(":")[0] not in result.output
