"""`colony-tasks install` for Gemini CLI and Qwen Code: their settings.json at both scopes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from colony_tasks.cli import cli
from colony_tasks.install import InstallError, run, status
from colony_tasks.install.plan import found_agents

EXE = "/opt/venv-a/bin/colony-tasks"
USER_SETTINGS = {
    "general": {"enableAutoUpdate": False},
    "hooks": {
        "BeforeTool": [
            {"matcher": "write_file", "hooks": [{"type": "command", "command": "my-guard"}]}
        ],
    },
    "mcpServers": {"docs": {"command": "docs-server", "args": ["--stdio"]}},
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_HOME"):
        monkeypatch.delenv(name, raising=False)
    return home


def settings(home: Path, agent: str) -> Path:
    return home / f".{agent}" / "settings.json"


def write(path: Path, data: dict) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2) + "\n"
    path.write_text(text)
    return text


def test_gemini_hooks_use_its_event_names_ms_timeouts_and_no_lifecycle_matcher(home: Path):
    run("install", ["gemini"], command=EXE)
    data = json.loads(settings(home, "gemini").read_text())
    hooks = data["hooks"]
    assert set(hooks) == {
        "SessionStart",
        "BeforeAgent",
        "BeforeTool",
        "AfterTool",
        "AfterAgent",
        "SessionEnd",
    }
    (start,) = hooks["SessionStart"]
    assert "matcher" not in start  # Gemini compares lifecycle matchers by equality
    assert start["hooks"][0]["command"] == f"{EXE} hook session-start --agent gemini"
    assert start["hooks"][0]["timeout"] == 10_000
    assert hooks["SessionEnd"][0]["hooks"][0]["timeout"] == 3_000
    (before,) = hooks["BeforeTool"]
    assert before["matcher"] == "^(write_file|replace|read_file|run_shell_command)$"
    assert "mcp_colony-tasks_.+" in hooks["AfterTool"][0]["matcher"]
    assert data["mcpServers"] == {"colony-tasks": {"command": EXE, "args": ["mcp"]}}


def test_qwen_hooks_use_claude_names_seconds_and_its_own_tools(home: Path):
    run("install", ["qwen"], command=EXE)
    hooks = json.loads(settings(home, "qwen").read_text())["hooks"]
    assert set(hooks) == {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SessionEnd",
    }
    assert hooks["PreToolUse"][0]["matcher"] == (
        "^(write_file|edit|notebook_edit|read_file|run_shell_command)$"
    )
    handler = hooks["PostToolUseFailure"][0]["hooks"][0]
    assert handler["command"] == f"{EXE} hook post-tool-use-failure --agent qwen"
    assert handler["timeout"] == 10


@pytest.mark.parametrize("agent", ["gemini", "qwen"])
def test_install_reinstall_uninstall_keep_the_users_content_exactly(home: Path, agent: str):
    path = settings(home, agent)
    original = write(path, USER_SETTINGS)
    first = run("install", [agent], command=EXE)
    assert [c.status for c in first.changes] == ["updated"]
    installed = path.read_text()
    data = json.loads(installed)
    assert data["hooks"]["BeforeTool" if agent == "gemini" else "PreToolUse"][0]["hooks"]
    assert data["mcpServers"]["docs"] == USER_SETTINGS["mcpServers"]["docs"]
    assert data["general"] == USER_SETTINGS["general"]

    again = run("install", [agent], command=EXE)
    assert [c.status for c in again.changes] == ["unchanged"]
    assert path.read_text() == installed

    removed = run("uninstall", [agent])
    assert [c.status for c in removed.changes] == ["updated"]
    assert path.read_text() == original


@pytest.mark.parametrize("agent", ["gemini", "qwen"])
def test_uninstall_deletes_the_file_install_created(home: Path, agent: str):
    run("install", [agent], command=EXE)
    assert settings(home, agent).exists()
    run("uninstall", [agent])
    assert not settings(home, agent).exists()


@pytest.mark.parametrize("agent", ["gemini", "qwen"])
def test_a_broken_settings_file_is_refused_in_one_line_and_left_alone(home: Path, agent: str):
    path = settings(home, agent)
    path.parent.mkdir()
    path.write_text('{"hooks": {,}')
    with pytest.raises(InstallError) as error:
        run("install", [agent], command=EXE)
    assert "\n" not in str(error.value) and str(path) in str(error.value)
    assert path.read_text() == '{"hooks": {,}'


def test_project_scope_writes_the_repository_files_with_the_command_on_path(
    tmp_path: Path, home: Path
):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    run("install", ["gemini", "qwen"], "project", command=EXE, cwd=root)
    for folder in (".gemini", ".qwen"):
        data = json.loads((root / folder / "settings.json").read_text())
        command = data["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        assert command.startswith("colony-tasks hook session-start --agent ")
        assert data["mcpServers"]["colony-tasks"]["command"] == "colony-tasks"
    run("uninstall", ["gemini", "qwen"], "project", cwd=root)
    assert not (root / ".gemini").exists() and not (root / ".qwen").exists()


def test_install_without_agent_covers_the_clients_that_have_run_here(home: Path):
    assert found_agents() == ("claude", "codex")
    (home / ".qwen").mkdir()
    assert found_agents() == ("claude", "codex", "qwen")
    (home / ".gemini").mkdir()
    result = CliRunner().invoke(cli, ["install", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert ".gemini/settings.json" in result.output and ".qwen/settings.json" in result.output


def test_the_cli_installs_one_client(home: Path):
    result = CliRunner().invoke(cli, ["install", "--agent", "gemini"])
    assert result.exit_code == 0, result.output
    assert "Installed for Gemini CLI (user scope)" in result.output
    assert "trust" in result.output
    assert not (home / ".claude").exists() and not (home / ".qwen").exists()


def test_doctor_finds_client_hooks_and_names_what_an_older_install_lacks(home: Path):
    run("install", ["gemini"], command=EXE)
    problems, notes = status.report(None)
    assert problems == [] and status.GEMINI_TRUST_STEP in notes
    path = settings(home, "gemini")
    data = json.loads(path.read_text())
    del data["hooks"]["BeforeAgent"]
    path.write_text(json.dumps(data))
    problems, _ = status.report(None)
    assert problems == [
        f"{path} lacks the colony-tasks hooks for BeforeAgent (installed by an older version);"
        " run `colony-tasks install` again."
    ]


def test_doctor_says_what_cursor_does_with_the_claude_hooks(home: Path):
    run("install", ["claude"], command=EXE)
    assert status.cursor_note(None) is None
    (home / ".cursor").mkdir()
    note = status.cursor_note(None)
    assert note and str(home / ".claude" / "settings.json") in note
    assert "session of its own" in note
    _, notes = status.report(None)
    assert note in notes
