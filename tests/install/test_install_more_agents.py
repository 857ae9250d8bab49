"""`colony-tasks install --agent copilot|opencode`: install, reinstall, uninstall, broken files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colony_tasks.install import InstallError, run
from colony_tasks.install.copilot import is_ours as is_our_copilot_handler
from tests.install.conftest import EXE

USER_COPILOT_HOOKS = {"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "lint"}]}}
USER_COPILOT_MCP = {"mcpServers": {"docs": {"type": "local", "command": "docs", "args": []}}}
USER_OPENCODE = {"model": "anthropic/claude", "mcp": {"docs": {"type": "local", "command": ["d"]}}}


@pytest.fixture
def home(user_home: Path) -> Path:
    return user_home


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".colony-tasks" not in p.parts
    }


def seed(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


@pytest.mark.parametrize("agent", ["copilot", "opencode"])
@pytest.mark.parametrize("scope", ["user", "project"])
def test_install_reinstall_uninstall_restores_every_file_exactly(home, agent, scope):
    seed(home / ".copilot" / "hooks" / "mine.json", USER_COPILOT_HOOKS)
    seed(home / ".copilot" / "mcp-config.json", USER_COPILOT_MCP)
    seed(home / ".config" / "opencode" / "opencode.json", USER_OPENCODE)
    root = home.parent
    before = snapshot(root)
    first = run("install", [agent], scope, command=EXE)
    assert {c.status for c in first.changes} <= {"created", "updated"}
    assert snapshot(root) != before
    again = run("install", [agent], scope, command=EXE)
    assert [c.status for c in again.changes] == ["unchanged"] * len(again.changes)
    run("uninstall", [agent], scope)
    assert snapshot(root) == before
    assert not (root / "repo" / ".opencode").exists() and not (root / "repo" / ".github").exists()


def test_copilot_hooks_are_native_camel_case_and_fail_open(home):
    run("install", ["copilot"], "user", command=EXE)
    data = json.loads((home / ".copilot" / "hooks" / "colony-tasks.json").read_text())
    assert data["version"] == 1
    assert list(data["hooks"]) == [
        "sessionStart",
        "userPromptSubmitted",
        "preToolUse",
        "postToolUse",
        "postToolUseFailure",
        "subagentStart",
        "agentStop",
        "sessionEnd",
    ]
    (pre,) = data["hooks"]["preToolUse"]
    assert pre["bash"] == f"{EXE} hook pre-tool-use --agent copilot 2>/dev/null || true"
    assert pre["timeoutSec"] == 10 and is_our_copilot_handler(pre)
    mcp = json.loads((home / ".copilot" / "mcp-config.json").read_text())
    assert mcp["mcpServers"]["colony-tasks"] == {
        "type": "local",
        "command": EXE,
        "args": ["mcp"],
        "tools": ["*"],
    }


def test_a_reinstall_from_another_venv_replaces_our_handler(home):
    run("install", ["copilot"], "user", command="/old/venv/bin/colony-tasks")
    run("install", ["copilot"], "user", command=EXE)
    data = json.loads((home / ".copilot" / "hooks" / "colony-tasks.json").read_text())
    assert all(len(handlers) == 1 for handlers in data["hooks"].values())
    assert all(EXE in handlers[0]["bash"] for handlers in data["hooks"].values())


def test_opencode_plugin_runs_the_command_and_mcp_entry_is_local(home):
    run("install", ["opencode"], "project", command=EXE)
    repo = home.parent / "repo"
    plugin = (repo / ".opencode" / "plugins" / "colony-tasks.js").read_text()
    assert plugin.startswith("// colony-tasks: generated")
    assert 'const COMMAND = "colony-tasks"' in plugin  # project files name the command on PATH
    assert "__" not in plugin.split("export const")[0].replace("__COMMAND__", "")
    config = json.loads((repo / "opencode.json").read_text())
    assert config == {
        "mcp": {
            "colony-tasks": {"type": "local", "command": ["colony-tasks", "mcp"], "enabled": True}
        }
    }


def test_opencode_jsonc_alone_is_the_file_edited(home):
    jsonc = home / ".config" / "opencode" / "opencode.jsonc"
    seed(jsonc, {"$schema": "https://opencode.ai/config.json"})
    run("install", ["opencode"], "user", command=EXE)
    assert "colony-tasks" in json.loads(jsonc.read_text())["mcp"]
    assert not (home / ".config" / "opencode" / "opencode.json").exists()


@pytest.mark.parametrize(
    ("path", "text", "said"),
    [
        (".copilot/hooks/colony-tasks.json", "{ nope", "is not valid JSON (line 1"),
        (".copilot/mcp-config.json", '{"mcpServers": []}', "`mcpServers` should be an object"),
        (".config/opencode/opencode.json", '{// mine\n"model": "x"}', "comments and trailing"),
        (".config/opencode/opencode.json", '{"mcp": "off"}', "`mcp` should be an object"),
        (".config/opencode/plugins/colony-tasks.js", "export const Mine = 1\n", "not written by"),
    ],
)
def test_a_broken_or_foreign_file_is_refused_in_one_line_and_nothing_is_written(
    home, path, text, said
):
    target = home / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    before = snapshot(home)
    agent = "copilot" if ".copilot" in path else "opencode"
    with pytest.raises(InstallError) as raised:
        run("install", [agent], "user", command=EXE)
    assert said in str(raised.value) and "\n" not in str(raised.value)
    assert snapshot(home) == before
